// Renders the pictures of editor/vscode/README.md: a Monaco editor (npm monaco-editor) in
// headless Chromium (Debian's /usr/bin/chromium, driven by playwright-core), showing
//   images/highlighting.png  lines of a sample, highlighted by grammar/iris.tmLanguage.json;
//   images/diagnostic.png    a sample with a planted error, the error of
//                            `irisc --diagnostics-format=json` as a marker, its hover open.
// The grammar tokenizes in Node with vscode-textmate and vscode-oniguruma, the packages VS Code
// uses (as grammar/test/tokenize.mjs does), and vscode-textmate resolves each token's scopes
// against theme.json (VS Code's Dark+ colors, but types teal and '@' orange) as VS Code does;
// Monaco gets the tokens through a tokens provider, each named by its color, so every color
// comes from the grammar's scopes.
//   npm ci --prefix editor/screenshot
//   node editor/screenshot/render.mjs [--irisc PATH] [--out DIR]
// --irisc defaults to $IRISC, else build/compiler/irisc; --out to editor/vscode/images.
// Chromium: $CHROMIUM, else /usr/bin/chromium (`bash scripts/setup.sh --pictures`).
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : fallback;
};
const irisc = path.resolve(option('--irisc', process.env.IRISC ?? path.join(root, 'build/compiler/irisc')));
const out = path.resolve(option('--out', path.join(root, 'editor/vscode/images')));
const chromium = process.env.CHROMIUM ?? '/usr/bin/chromium';
const die = (message) => {
  console.error(`render.mjs: ${message}`);
  process.exit(1);
};

// What the pictures show: the sample (and the lines of it) that is highlighted; the sample and
// the edit that plants an error in it (the mouse then rests on the error to open its hover).
const HIGHLIGHT = { file: 'samples/message_passing.iris', first: 21, last: 51 };
const DIAGNOSTIC = {
  file: 'samples/all_gather.iris',
  replace: 'store(dst + rank() * n + offs @ r, x, mask);',
  by: 'store(src + rank() * n + offs @ r, x, mask);',
};
const WIDTH = 900;

if (!fs.existsSync(chromium))
  die(`Chromium is missing (${chromium}). Install it with\n  bash scripts/setup.sh --pictures\n` +
      `(apt-get install chromium fonts-dejavu-core), or set CHROMIUM to a Chromium or Chrome.`);
if (!fs.existsSync(path.join(here, 'node_modules/monaco-editor')))
  die(`the npm packages are missing. Install them with\n  npm ci --prefix editor/screenshot`);
if (!fs.existsSync(irisc))
  die(`no irisc at ${irisc}: build it (scripts/build.sh) or give --irisc PATH`);

const require = createRequire(import.meta.url);
const textmate = require('vscode-textmate');
const oniguruma = require('vscode-oniguruma');
const { chromium: playwright } = require('playwright-core');

// ---- the grammar and the theme, loaded as VS Code loads them.
const wasm = fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm'));
await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
const theme = JSON.parse(fs.readFileSync(path.join(here, 'theme.json'), 'utf8'));
const registry = new textmate.Registry({
  onigLib: Promise.resolve({
    createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
    createOnigString: (text) => new oniguruma.OnigString(text),
  }),
  loadGrammar: async () =>
    textmate.parseRawGrammar(fs.readFileSync(path.join(root, 'grammar/iris.tmLanguage.json'), 'utf8'), 'iris.tmLanguage.json'),
  theme,
});
const grammar = await registry.loadGrammar('source.iris');
const colorMap = registry.getColorMap();

// The tokens of `text` for Monaco: per line, a list of {startIndex, scopes}, where `scopes` (the
// name Monaco's theme rules match) is `c<color>_<font style>`, the color and style that
// vscode-textmate computed from the token's scopes and the theme (its EncodedTokenAttributes:
// font style in bits 11-14, foreground in bits 15-23). `legend` collects, per type, the innermost
// scopes that got it, printed at the end for the check by eye.
const legend = new Map();
function tokenize(text) {
  let state = textmate.INITIAL;
  return text.split('\n').map((line) => {
    const encoded = grammar.tokenizeLine2(line, state);
    const scoped = grammar.tokenizeLine(line, state);
    state = encoded.ruleStack;
    const tokens = [];
    for (let i = 0; i < encoded.tokens.length; i += 2) {
      const start = encoded.tokens[i], meta = encoded.tokens[i + 1];
      const type = `c${(meta >>> 15) & 0x1ff}_${(meta >>> 11) & 0xf}`;
      tokens.push({ startIndex: start, scopes: type });
      for (const t of scoped.tokens)
        if (t.startIndex < (encoded.tokens[i + 2] ?? line.length) && t.endIndex > start && line.slice(t.startIndex, t.endIndex).trim()) {
          if (!legend.has(type)) legend.set(type, new Set());
          legend.get(type).add(t.scopes.at(-1));
        }
    }
    return tokens;
  });
}
// Monaco's theme rules for those types: the colors of vscode-textmate's color map.
const rules = [];
for (let color = 1; color < colorMap.length; color++)
  for (let style = 0; style < 16; style++)
    rules.push({
      token: `c${color}_${style}`,
      foreground: colorMap[color].replace('#', ''),
      fontStyle: [style & 1 && 'italic', style & 2 && 'bold', style & 4 && 'underline'].filter(Boolean).join(' '),
    });
const common = { rules, foreground: colorMap[1], background: colorMap[2] };

// ---- picture 1: the highlighted lines.
// The whole file is tokenized, so that the lines shown start in the state the lines above leave.
const sampleText = fs.readFileSync(path.join(root, HIGHLIGHT.file), 'utf8');
const highlight = {
  ...common, path: `/${HIGHLIGHT.file}`,
  text: sampleText.split('\n').slice(HIGHLIGHT.first - 1, HIGHLIGHT.last).join('\n'),
  tokens: tokenize(sampleText).slice(HIGHLIGHT.first - 1, HIGHLIGHT.last),
  firstLine: HIGHLIGHT.first, lines: HIGHLIGHT.last - HIGHLIGHT.first + 1, extraLines: 0,
  width: WIDTH, markers: [], hover: null,
};

// ---- picture 2: the planted error, as irisc reports it.
const original = fs.readFileSync(path.join(root, DIAGNOSTIC.file), 'utf8');
if (!original.includes(DIAGNOSTIC.replace)) die(`${DIAGNOSTIC.file} no longer holds '${DIAGNOSTIC.replace}': update DIAGNOSTIC`);
const broken = original.replace(DIAGNOSTIC.replace, DIAGNOSTIC.by);
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'iris-screenshot-'));
const name = path.basename(DIAGNOSTIC.file);
fs.writeFileSync(path.join(work, name), broken);
const run = spawnSync(irisc, ['--diagnostics-format=json', name], { cwd: work, encoding: 'utf8' });
fs.rmSync(work, { recursive: true });
let errors;
try {
  errors = JSON.parse(run.stderr);
} catch {
  die(`irisc --diagnostics-format=json printed no JSON (status ${run.status}): ${run.stderr}`);
}
if (run.status !== 1 || errors.length !== 1 || !errors[0].range)
  die(`the planted error should give one error, irisc gave status ${run.status} and ${JSON.stringify(errors)}`);
// irisc's columns count from 1 and its end is one past the last character, as Monaco's.
const toRange = (r) => ({ startLineNumber: r.start.line, startColumn: r.start.column, endLineNumber: r.end.line, endColumn: r.end.column });
const markers = errors.map((e) => ({
  severity: 8, // MarkerSeverity.Error
  message: e.message, source: 'irisc', code: e.kind, ...toRange(e.range),
  relatedInformation: e.notes.map((n) => ({ path: `/${path.dirname(DIAGNOSTIC.file)}/${n.file}`, message: n.message, ...toRange(n.range) })),
}));
console.log(`irisc: ${errors.map((e) => `${e.file}:${e.range.start.line}:${e.range.start.column}: ${e.kind}: ${e.message}`).join('\n')}`);
const diagnostic = {
  ...common, path: `/${DIAGNOSTIC.file}`, text: broken.replace(/\n$/, ''), tokens: tokenize(broken.replace(/\n$/, '')),
  firstLine: 1, lines: broken.replace(/\n$/, '').split('\n').length, extraLines: 5, width: WIDTH, markers,
  hover: { lineNumber: errors[0].range.start.line, column: errors[0].range.start.column + 2 },
};

// ---- the page, served from here: page.html, Monaco's files and the picture's data.
let data = null;
const monacoDir = path.join(here, 'node_modules/monaco-editor/min');
const server = http.createServer((request, response) => {
  const url = new URL(request.url, 'http://localhost').pathname;
  let body = null, type = 'text/plain';
  if (url === '/') [body, type] = [fs.readFileSync(path.join(here, 'page.html')), 'text/html'];
  else if (url === '/data.json') [body, type] = [JSON.stringify(data), 'application/json'];
  else if (url.startsWith('/monaco/')) {
    const file = path.join(monacoDir, path.normalize(url.slice('/monaco/'.length)));
    if (file.startsWith(monacoDir) && fs.existsSync(file) && fs.statSync(file).isFile()) {
      body = fs.readFileSync(file);
      type = { '.js': 'text/javascript', '.css': 'text/css', '.ttf': 'font/ttf' }[path.extname(file)] ?? 'application/octet-stream';
    }
  }
  response.writeHead(body ? 200 : 404, { 'Content-Type': type });
  response.end(body ?? 'not found');
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${server.address().port}/`;

fs.mkdirSync(out, { recursive: true });
const browser = await playwright.launch({ executablePath: chromium, headless: true });
try {
  const page = await browser.newPage({ viewport: { width: WIDTH + 40, height: 1000 }, deviceScaleFactor: 1 });
  page.on('pageerror', (error) => console.error(`page: ${error.message}`));
  for (const [file, picture] of [['highlighting.png', highlight], ['diagnostic.png', diagnostic]]) {
    data = picture;
    await page.goto(base);
    await page.waitForFunction(() => window.irisReady === true);
    await page.waitForTimeout(300); // the tokens and the squiggles are painted on the next frames
    if (picture.hover) {
      const point = await page.evaluate(() => window.irisHoverPoint);
      await page.mouse.move(point.x - 30, point.y);
      await page.mouse.move(point.x, point.y, { steps: 5 });
      await page.waitForSelector('.monaco-hover .marker.hover-contents', { state: 'visible' });
      await page.waitForTimeout(300);
    }
    await page.locator('#frame').screenshot({ path: path.join(out, file) });
    console.log(`${path.relative(root, path.join(out, file))}: ${fs.statSync(path.join(out, file)).size} bytes`);
  }
} finally {
  await browser.close();
  server.close();
}

// The colors and the scopes that got each, to check the pictures against.
for (const [type, scopes] of [...legend].sort()) {
  const [color, style] = type.slice(1).split('_').map(Number);
  console.log(`${colorMap[color]}${style ? ` (font style ${style})` : ''}: ${[...scopes].sort().join(' ')}`);
}
