/* The microphone, captured for the recogniser (the teacher's page and the translator's 🎤):
   getUserMedia, then an AudioWorklet (pcm-worklet.js) that makes 16 kHz mono 16-bit frames of
   100 ms. Why it cannot start is told by a key of the speech words (live-words.js):
   insecure (not https nor localhost), noMedia, noWorklet, denied, noDevice. */
"use strict";
(function () {
  const here = document.currentScript ? document.currentScript.src : "";
  /* The reason the microphone cannot be had on this page, or "" (checked before asking). */
  function unavailable() {
    if (!window.isSecureContext) return "insecure";
    if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) return "noMedia";
    if (!window.AudioWorkletNode || !window.AudioContext) return "noWorklet";
    return "";
  }
  function reasonOf(error) {
    const name = error && error.name;
    if (name === "NotAllowedError" || name === "SecurityError") return "denied";
    if (name === "NotFoundError" || name === "OverconstrainedError" || name === "NotReadableError") return "noDevice";
    return error && error.reason ? error.reason : "noMedia";
  }
  /* Start capturing: ``onFrame(ArrayBuffer of Int16 PCM)`` every 100 ms. Resolves to
     ``{stop()}``; rejects with an Error whose ``reason`` is a word key. */
  async function start(onFrame, onLevel) {
    const why = unavailable();
    if (why) { const e = new Error(why); e.reason = why; throw e; }
    let stream;
    try {
      stream = await navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1,
        echoCancellation: true, noiseSuppression: true, autoGainControl: true } });
    } catch (x) { const e = new Error(reasonOf(x)); e.reason = reasonOf(x); throw e; }
    let ctx;
    try { ctx = new AudioContext({ sampleRate: 16000 }); } catch (x) { ctx = new AudioContext(); }
    const stopAll = () => { for (const t of stream.getTracks()) t.stop(); ctx.close().catch(() => {}); };
    try {
      await ctx.audioWorklet.addModule(new URL("pcm-worklet.js", here || location.href).href);
      const node = new AudioWorkletNode(ctx, "hymt-pcm16k");
      node.port.onmessage = (m) => {
        if (onLevel) {
          const pcm = new Int16Array(m.data);
          let peak = 0;
          for (let i = 0; i < pcm.length; i += 8) peak = Math.max(peak, Math.abs(pcm[i]));
          onLevel(peak / 32768);
        }
        onFrame(m.data);
      };
      ctx.createMediaStreamSource(stream).connect(node);
      node.connect(ctx.destination);  // the node writes silence: pulled, never heard
      if (ctx.state === "suspended") await ctx.resume();
    } catch (x) {
      stopAll();
      const e = new Error("noWorklet"); e.reason = "noWorklet"; throw e;
    }
    return { stop: stopAll };
  }
  /* A word of the speech table in the page's language (en or zh for now). */
  function words() {
    const all = window.HYLiveWords || { en: {} };
    const C = window.HYClass;
    let ui = C && C.ui ? C.ui : (navigator.language || "en");
    ui = /^(zh|yue)/i.test(ui) ? "zh" : "en";
    const table = all[ui] || all.en;
    return (key, vars) => {
      let s = table[key] !== undefined ? table[key] : (all.en[key] !== undefined ? all.en[key] : key);
      for (const [k, v] of Object.entries(vars || {})) s = s.split("{" + k + "}").join(String(v));
      return s;
    };
  }
  window.HYCapture = { start, unavailable, words };
})();
