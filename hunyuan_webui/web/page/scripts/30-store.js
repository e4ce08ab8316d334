// The phrasebook: a saved translation is stamped with the visitor's own clock, in
// the visitor's time zone, which the server knows nothing of ("2026-12-02 09:41").
window.hymt.localTime = () => {
  const d = new Date();
  const two = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} `
    + `${two(d.getHours())}:${two(d.getMinutes())}`;
};
