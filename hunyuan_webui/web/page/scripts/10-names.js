// Language names, native first: the pickers show each language by its own name, then
// the page's name for it ("Deutsch · 德语"); its English and Chinese names, code and the other
// names tools use find it too ("German" on the Chinese page). Gradio's dropdown searches the label
// only (label.toLowerCase().includes(query)): for exactly the pickers' labels, a query their label
// lacks is looked for in their search words. Other strings are untouched.
(() => {
  const words = new Map();
  for (const entry of __NAMES__) {
    const keys = entry.keys.toLowerCase();
    for (const label of entry.labels) {
      words.set(label, keys);
      words.set(label.toLowerCase(), keys);
    }
  }
  const includes = String.prototype.includes;
  Object.defineProperty(String.prototype, 'includes', {
    configurable: true,
    writable: true,
    value: function hymtIncludes(search, position) {
      if (includes.call(this, search, position)) return true;
      if (position !== undefined || typeof search !== 'string' || !search) return false;
      const keys = words.get(String(this));
      return keys !== undefined && includes.call(keys, search.toLowerCase());
    },
  });
})();
// What Gradio writes in English where a screen reader reads it (its buttons' aria-labels and
// titles: "Copy", "number input for 温度"...), in Chinese on a Chinese page. Gradio translates its
// visible words itself; these few it does not.
(() => {
  if (!window.hymt || !window.hymt.zh) return;
  const exact = {
    'Copy': '复制', 'Copied': '已复制', 'Copied!': '已复制', 'Copy to clipboard': '复制',
    'Clear': '清除', 'Download': '下载', 'Remove': '移除', 'Undo': '撤销', 'Share': '分享',
    'Fullscreen': '全屏', 'Exit fullscreen': '退出全屏', 'Exit fullscreen mode': '退出全屏',
    'Close': '关闭', 'Click to upload or drop files': '点击上传或拖放文件',
    'Reset': '重置', 'Reset to default': '恢复默认值', 'Reset to default value': '恢复默认值',
    'Upload': '上传', 'Upload file': '上传文件', 'Search': '搜索', 'Remove this file': '移除此文件',
    'Paste from clipboard': '从剪贴板粘贴', 'Empty value': '空', 'Table actions': '表格操作',
    'Open cell menu': '打开单元格菜单', 'Add row': '添加行', 'Add row above': '在上方添加行',
    'Add row below': '在下方添加行', 'Delete row': '删除行', 'Delete column': '删除列',
    'Add column to the left': '在左侧添加列', 'Add column to the right': '在右侧添加列',
    'Static column': '固定列', 'Filtered': '已筛选', 'Copy table data': '复制表格数据',
    'Dataframe': '表格', 'Gradio footer navigation': 'Gradio 页脚导航',
  };
  const patterns = [
    [/^number input for (.+)$/, '$1（数值）'],
    [/^range slider for (.+)$/, '$1（滑块）'],
    [/^Select example (\d+): (.*)$/s, '示例 $1：$2'],
    [/^File: (.*)$/s, '文件：$1'],
  ];
  const say = (text) => {
    if (exact[text]) return exact[text];
    for (const [pattern, chinese] of patterns) {
      if (pattern.test(text)) return text.replace(pattern, chinese);
    }
    return null;
  };
  const names = ['aria-label', 'title', 'placeholder'];
  const fix = (e) => {
    for (const name of names) {
      const text = e.getAttribute && e.getAttribute(name);
      const chinese = text && say(text.trim());
      if (chinese && chinese !== text) e.setAttribute(name, chinese);
    }
  };
  let queued = false;
  const all = () => {
    queued = false;
    document.querySelectorAll('[aria-label], [title], [placeholder]').forEach(fix);
    if (document.title === 'Hunyuan-MT Translator') document.title = '混元翻译';
  };
  new MutationObserver(() => {
    if (!queued) { queued = true; requestAnimationFrame(all); }
  }).observe(document.documentElement, {subtree: true, childList: true, attributes: true,
                                        attributeFilter: names});
})();
// Touch targets: Gradio puts the page's CSS under its app's container, and its footer
// is outside it, so the footer's links get their 44 px on a phone from this style of their own.
document.head.insertAdjacentHTML('beforeend', '<style>@media (max-width: 640px) { '
  + 'footer a[href], footer button { min-height: 44px; min-width: 44px; } }</style>');
