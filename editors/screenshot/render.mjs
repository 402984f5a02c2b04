// Turns a hover's Markdown into an HTML page that looks like VS Code (Dark Modern theme):
// a few lines of the source file, highlighted with the repository's TextMate grammar, the
// hovered range marked, and the hover widget under it with the rendered Markdown
// (markdown-it, as VS Code uses; ```mlir blocks highlighted with the same grammar).
//
//   node render.mjs HOVER.md SOURCE.mlir LINE COL OUT.html
//
// LINE and COL are 1-based, as for `sdy-lsp explain FILE:LINE:COL`. render.sh drives it.

import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import MarkdownIt from 'markdown-it';
import oniguruma from 'vscode-oniguruma';
import textmate from 'vscode-textmate';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const [mdFile, sourceFile, lineArg, colArg, outFile] = process.argv.slice(2);
if (!outFile) {
  console.error('usage: node render.mjs HOVER.md SOURCE.mlir LINE COL OUT.html');
  process.exit(2);
}
const line = Number(lineArg) - 1;
const col = Number(colArg) - 1;

// --- Highlighting with syntaxes/mlir.tmLanguage.json --------------------------------------

const wasm = readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm')).buffer;
await oniguruma.loadWASM(wasm);
const registry = new textmate.Registry({
  onigLib: Promise.resolve({
    createOnigScanner: (p) => new oniguruma.OnigScanner(p),
    createOnigString: (s) => new oniguruma.OnigString(s),
  }),
  loadGrammar: async (scope) =>
    scope === 'source.mlir'
      ? textmate.parseRawGrammar(
          readFileSync(join(here, '..', '..', 'syntaxes', 'mlir.tmLanguage.json'), 'utf8'),
          'mlir.tmLanguage.json',
        )
      : null,
});
const grammar = await registry.loadGrammar('source.mlir');

// VS Code's Dark Modern / Dark+ colours for the scopes the grammar produces (the longest
// matching scope prefix wins, innermost scope first).
const THEME = [
  ['comment', '#6A9955'],
  ['string', '#CE9178'],
  ['constant.character.escape', '#D7BA7D'],
  ['constant.numeric', '#B5CEA8'],
  ['constant.language', '#569CD6'],
  ['entity.name.function', '#DCDCAA'],
  ['entity.name.type', '#4EC9B0'],
  ['entity.name.namespace', '#4EC9B0'],
  ['variable.other.enummember', '#4FC1FF'],
  ['variable', '#9CDCFE'],
  ['keyword.control', '#C586C0'],
  ['keyword', '#569CD6'],
  ['punctuation.definition.string', '#CE9178'],
];
const FOREGROUND = '#CCCCCC';

function colorOf(scopes) {
  for (let i = scopes.length - 1; i >= 0; i--) {
    let best;
    for (const [prefix, color] of THEME) {
      if ((scopes[i] === prefix || scopes[i].startsWith(prefix + '.')) && (!best || prefix.length > best[0].length)) {
        best = [prefix, color];
      }
    }
    if (best) return best[1];
  }
  return FOREGROUND;
}

const escape = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** HTML for lines of MLIR; `mark` = [line, start, end] gets the hover-range background. */
function highlight(code, mark) {
  let state = textmate.INITIAL;
  return code.split('\n').map((text, i) => {
    const r = grammar.tokenizeLine(text, state);
    state = r.ruleStack;
    let html = '';
    for (const t of r.tokens) {
      const end = Math.min(t.endIndex, text.length);
      // Split tokens at the marked range.
      const cuts = [t.startIndex, end];
      if (mark && mark[0] === i) {
        for (const c of [mark[1], mark[2]]) if (c > t.startIndex && c < end) cuts.splice(-1, 0, c);
      }
      cuts.sort((a, b) => a - b);
      for (let k = 0; k + 1 < cuts.length; k++) {
        const piece = text.slice(cuts[k], cuts[k + 1]);
        if (piece === '') continue;
        const marked = mark && mark[0] === i && cuts[k] >= mark[1] && cuts[k + 1] <= mark[2];
        html += `<span style="color:${colorOf(t.scopes)}"${marked ? ' class="hover-range"' : ''}>${escape(piece)}</span>`;
      }
    }
    return html;
  });
}

// --- The hovered range: the #sdy.sharding<...> around the position ------------------------

const source = readFileSync(sourceFile, 'utf8').split('\n');
const srcLine = source[line];
let start = srcLine.lastIndexOf('#sdy.sharding', col);
if (start < 0) start = col;
let end = start;
for (let depth = 0, i = srcLine.indexOf('<', start); i >= 0 && i < srcLine.length; i++) {
  if (srcLine[i] === '<') depth++;
  if (srcLine[i] === '>' && --depth === 0) {
    end = i + 1;
    break;
  }
}

// --- The page ---------------------------------------------------------------------------

const md = new MarkdownIt({
  html: false,
  highlight: (code, lang) =>
    lang === 'mlir' ? highlight(code.replace(/\n$/, '')).join('\n') : escape(code),
});
const hoverHtml = md.render(readFileSync(mdFile, 'utf8'));

const first = Math.max(0, line - 3);
const last = Math.min(source.length - 1, line + 1);
const editorLines = highlight(source.slice(first, last + 1).join('\n'), [line - first, start, end]);
const gutter = String(last + 1).length;

const CHAR = 8.43; // DejaVu Sans Mono advance at 14px
const LINE_HEIGHT = 19;
const hoverLeft = 64 + start * CHAR;
const hoverTop = (line - first + 1) * LINE_HEIGHT + 8;

const html = `<!doctype html>
<html><head><meta charset="utf-8"><style>
  html, body { margin: 0; background: #1F1F1F; }
  body { width: ${Math.max(1000, Math.ceil(hoverLeft) + 800)}px; padding: 0 0 16px 0; }
  .editor { position: relative; font: 14px/19px "Droid Sans Mono", "DejaVu Sans Mono", monospace; color: ${FOREGROUND};
            white-space: pre; padding-top: 8px; }
  .ln { display: inline-block; width: ${gutter + 2}ch; padding-right: 22px; text-align: right; color: #6E7681; }
  .ln.current { color: #CCCCCC; }
  .hover-range { background: rgba(38, 79, 120, 0.55); }
  .hover { position: absolute; left: ${hoverLeft}px; top: ${hoverTop}px; max-width: 780px; white-space: normal;
           background: #202020; border: 1px solid #454545; border-radius: 3px; box-shadow: 0 0 8px 2px rgba(0, 0, 0, 0.36);
           color: #CCCCCC; font: 13px/1.45 -apple-system, "Segoe WPC", "Segoe UI", "Ubuntu", "Droid Sans", "DejaVu Sans", sans-serif;
           padding: 4px 8px; }
  .hover p { margin: 8px 0; }
  .hover code { font-family: "Droid Sans Mono", "DejaVu Sans Mono", monospace; font-size: 13px; color: #CCCCCC;
                background: rgba(110, 118, 129, 0.28); border-radius: 3px; padding: 1px 3px; }
  .hover pre { margin: 8px 0; padding: 0; background: none; }
  .hover pre code { background: none; padding: 0; font-size: 14px; line-height: 19px; white-space: pre; }
  .hover table { border-collapse: collapse; margin: 8px 0; }
  .hover th, .hover td { border: 1px solid rgba(204, 204, 204, 0.22); padding: 2px 8px; }
  .hover th { font-weight: 600; }
  .hover th[style*="right"], .hover td[style*="right"] { text-align: right; }
  .hover ul { margin: 8px 0; padding-left: 20px; }
  .hover strong { font-weight: 600; }
</style></head><body>
<div class="editor">${editorLines
  .map(
    (l, i) =>
      `<div><span class="ln${first + i === line ? ' current' : ''}">${first + i + 1}</span>${l}</div>`,
  )
  .join('')}
<div class="hover" id="hover">${hoverHtml}</div>
</div>
<script>
  // render.sh reads this to size the screenshot.
  const r = document.getElementById('hover').getBoundingClientRect();
  document.body.setAttribute('data-height', Math.ceil(r.bottom + window.scrollY + 16));
  document.body.setAttribute('data-width', Math.ceil(Math.max(r.right + 24, 900)));
</script>
</body></html>
`;
writeFileSync(outFile, html);
