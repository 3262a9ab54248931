// Tokenizes .iris files with the TextMate grammar (grammar/iris.tmLanguage.json)
// as VS Code does, through vscode-textmate and vscode-oniguruma, and checks the
// scopes against irisc's own lexer and the compiler's lists:
//   - every keyword of tokens.def and every built-in of builtins.def has a
//     scope of its kind (a keyword, a type, a constant; a built-in's call);
//   - in every file given, each token that `irisc --emit=tokens` prints has
//     the scope of its kind (keywords, types, '@', numbers, strings, built-in
//     calls; an identifier none of those), and all text outside the tokens is
//     whitespace or a comment;
//   - wait_until's second argument, when it is a comparison name given
//     positionally (`wait_until(p, ge, n)`), has the enumerator scope that
//     `op = ge` gives, and a comparison name elsewhere (a variable `lt`) has not.
//   node tokenize.mjs <irisc> <repository root> <file.iris>...
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const textmate = require('vscode-textmate');
const oniguruma = require('vscode-oniguruma');

const [irisc, root, ...files] = process.argv.slice(2);
const failures = [];
const fail = (message) => failures.push(message);

// ---- the compiler's lists: KEYWORD(Name, "spelling"), BUILTIN(Name, "spelling", ...) and its
// variants, SCALAR(Name, "spelling", ...).
function spellings(def, macros) {
  const text = fs.readFileSync(path.join(root, def), 'utf8');
  const pattern = new RegExp(`^(?:${macros.join('|')})\\(\\w+, "([^"]+)"`, 'gm');
  return [...text.matchAll(pattern)].map((m) => m[1]);
}
const keywords = spellings('compiler/include/irisc/tokens.def', ['KEYWORD']);
const builtins = spellings('compiler/include/irisc/builtins.def', ['BUILTIN', 'ATOMIC_RMW', 'ELEMENTWISE', 'MULTINODE']);
const scalarTypes = new Set(spellings('compiler/include/irisc/scalars.def', ['SCALAR']));
if (keywords.length < 30 || builtins.length < 40 || scalarTypes.size < 13)
  fail(`the .def files read too few names: ${keywords.length} keywords, ${builtins.length} built-ins, ${scalarTypes.size} types`);

// ---- the grammar, loaded as VS Code loads it.
const wasm = fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm'));
await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
const registry = new textmate.Registry({
  onigLib: Promise.resolve({
    createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
    createOnigString: (text) => new oniguruma.OnigString(text),
  }),
  loadGrammar: async () =>
    textmate.parseRawGrammar(fs.readFileSync(path.join(root, 'grammar/iris.tmLanguage.json'), 'utf8'), 'iris.tmLanguage.json'),
});
const grammar = await registry.loadGrammar('source.iris');

// The lines of `text`, each a list of {start, end, scopes} (UTF-16 offsets).
function tokenizeLines(text) {
  let state = textmate.INITIAL;
  return text.split(/\r\n|\r|\n/).map((line) => {
    const result = grammar.tokenizeLine(line, state);
    state = result.ruleStack;
    return result.tokens.map((t) => ({ start: t.startIndex, end: t.endIndex, scopes: t.scopes }));
  });
}
const scopesAt = (lineTokens, offset) => lineTokens.find((t) => t.start <= offset && offset < t.end)?.scopes ?? [];
const has = (scopes, prefix) => scopes.some((s) => s.startsWith(prefix));

// The scope a keyword must have: a type's, a constant's, or a keyword's (a
// declaration word is storage, as in other TextMate grammars).
function keywordScopeOk(spelling, scopes) {
  if (scalarTypes.has(spelling)) return has(scopes, 'storage.type.primitive.');
  if (spelling === 'tile') return has(scopes, 'storage.type.tile.');
  if (spelling === 'true' || spelling === 'false') return has(scopes, 'constant.language.boolean.');
  return has(scopes, 'keyword.') || has(scopes, 'storage.');
}

// ---- every keyword and built-in, alone.
for (const keyword of keywords) {
  const [line] = tokenizeLines(`  ${keyword}  `);
  const scopes = scopesAt(line, 2);
  if (!keywordScopeOk(keyword, scopes)) fail(`keyword '${keyword}' (tokens.def) has no keyword scope: ${scopes.join(' ')}`);
}
for (const builtin of builtins) {
  const [line] = tokenizeLines(`let x = ${builtin}(a);`);
  const scopes = scopesAt(line, 8);
  if (!has(scopes, 'support.function.builtin.'))
    fail(`built-in '${builtin}' (builtins.def) has no built-in scope in a call: ${scopes.join(' ')}`);
}

// ---- the comparisons of wait_until: positional as its second argument, also after nested
// parentheses and a named first argument, as 'op = '; not elsewhere (1-based columns of the name).
const comparisons = new Set(['eq', 'ne', 'lt', 'le', 'gt', 'ge']);
const isComparison = (scopes) => has(scopes, 'constant.language.enumerator.');
for (const [text, line, column, want] of [
  ['wait_until(flags + program_id(0), ge, round, sem = acquire, scope = sys);', 0, 35, true],
  ['wait_until(ptr = f(a, b), lt, 1);', 0, 27, true],
  ['wait_until(p, op = ne, value = 1);', 0, 20, true],
  ['wait_until(\n  flags + g(0, 1),\n  le, 1);', 2, 3, true],
  ['wait_until(p, /* c */ ge, 1); // ge', 0, 23, true],
  ['wait_until(p, eq, lt, sem = acquire);', 0, 19, false],
  ['wait_until(p, eq, f(lt, gt), le);', 0, 21, false],
  ['wait_until(p, gt + 1, 0);', 0, 15, false],
  ['let x = f(a, lt) + g(gt, ge);', 0, 14, false],
]) {
  const scopes = scopesAt(tokenizeLines(text)[line], column - 1);
  if (isComparison(scopes) !== want)
    fail(`'${text.replace(/\n/g, '\\n')}' line ${line + 1} column ${column}: the comparison scope ${want ? 'missing' : 'given'}: ${scopes.join(' ')}`);
}

// ---- every file against irisc's tokens.
const builtinNames = new Set(builtins);
const keywordNames = new Set(keywords);
// Words that are keywords only in some places (iris.ebnf's lexical section),
// and the enumerators named arguments and wait_until's positional comparison
// take: highlighted there, identifiers to the lexer.
const contextual = new Set(['None', 'step', 'stages', 'type', 'relaxed', 'acquire', 'release', 'acq_rel', 'block', 'gpu',
  'sys', 'eq', 'ne', 'lt', 'le', 'gt', 'ge', 'set', 'add']);
let tokensChecked = 0, comparisonsChecked = 0;
for (const file of files) {
  const bytes = fs.readFileSync(file);
  const lines = bytes.toString('utf8').split(/\r\n|\r|\n/);
  const tokenLines = tokenizeLines(lines.join('\n'));
  // irisc's columns count bytes; the tokenizer's offsets count UTF-16 units.
  const utf16Offset = (line, byteColumn) =>
    Buffer.from(lines[line], 'utf8').subarray(0, byteColumn - 1).toString('utf8').length;
  const covered = lines.map((l) => new Array(l.length).fill(false));
  const where = (line, offset) => `${path.relative(root, file)}:${line + 1}:${offset + 1}`;
  const lexed = execFileSync(irisc, ['--emit=tokens', file], { encoding: 'utf8' }).trimEnd().split('\n');
  const tokens = lexed.map((entry) => {
    const m = /^(\d+):(\d+) (\w+) '(.*)'$/s.exec(entry);
    if (!m) throw new Error(`unexpected irisc --emit=tokens line: ${entry}`);
    return { line: +m[1] - 1, column: +m[2], kind: m[3], text: m[4] };
  }).filter((t) => t.kind !== 'Eof');
  // The tokens that are wait_until's second argument, a bare comparison name.
  const positionalComparisons = new Set();
  tokens.forEach((token, i) => {
    if (token.text !== 'wait_until' || tokens[i + 1]?.kind !== 'LParen') return;
    for (let j = i + 2, depth = 0; j < tokens.length && depth >= 0; ++j) {
      if (tokens[j].kind === 'LParen' || tokens[j].kind === 'LBracket') ++depth;
      else if (tokens[j].kind === 'RParen' || tokens[j].kind === 'RBracket') --depth;
      else if (depth === 0 && tokens[j].kind === 'Comma') {
        if (comparisons.has(tokens[j + 1]?.text) && ['Comma', 'RParen'].includes(tokens[j + 2]?.kind))
          positionalComparisons.add(j + 1);
        break;
      }
    }
  });
  tokens.forEach((token, i) => {
    const offset = utf16Offset(token.line, token.column);
    const scopes = scopesAt(tokenLines[token.line], offset);
    const next = tokens[i + 1];
    const problem = (what) => fail(`${where(token.line, offset)}: ${token.kind} '${token.text}' ${what}: ${scopes.join(' ')}`);
    for (let k = 0; k < token.text.length && token.line < lines.length; ++k) covered[token.line][offset + k] = true;
    ++tokensChecked;
    if (positionalComparisons.has(i)) {
      ++comparisonsChecked;
      if (!isComparison(scopes)) problem("is wait_until's comparison without the enumerator scope");
    }
    if (has(scopes, 'comment.')) problem('is inside a comment');
    else if (keywordNames.has(token.text) && token.kind !== 'Identifier') {
      if (!keywordScopeOk(token.text, scopes)) problem('has no keyword scope');
    } else if (token.kind === 'IntLiteral') {
      if (!has(scopes, 'constant.numeric.integer.')) problem('is not an integer');
    } else if (token.kind === 'FloatLiteral') {
      if (!has(scopes, 'constant.numeric.float.')) problem('is not a float');
    } else if (token.kind === 'StringLiteral') {
      if (!has(scopes, 'string.quoted.double.')) problem('is not a string');
    } else if (token.kind === 'At') {
      if (!has(scopes, 'keyword.operator.translate.')) problem("is not the translation operator");
    } else if (token.kind === 'Identifier') {
      if (builtinNames.has(token.text) && next?.kind === 'LParen' && !has(scopes, 'entity.name.function.iris')) {
        if (!has(scopes, 'support.function.builtin.')) problem('is a call of a built-in without its scope');
      } else if (!contextual.has(token.text) &&
                 ['keyword.', 'storage.', 'constant.', 'support.', 'string.'].some((p) => has(scopes, p))) {
        problem('is an identifier with the scope of something else');
      }
    }
  });
  // What no token covers is whitespace or a comment.
  lines.forEach((line, l) => {
    for (let c = 0; c < line.length; ++c) {
      if (covered[l][c] || /\s/.test(line[c])) continue;
      const scopes = scopesAt(tokenLines[l], c);
      if (!has(scopes, 'comment.')) {
        fail(`${where(l, c)}: '${line[c]}' is outside irisc's tokens but not in a comment: ${scopes.join(' ')}`);
        break;
      }
    }
  });
}

for (const failure of failures.slice(0, 50)) console.error(`FAILED: ${failure}`);
console.log(`grammar: ${keywords.length} keywords and ${builtins.length} built-ins of the .def files, ` +
  `${tokensChecked} tokens of ${files.length} files (${comparisonsChecked} positional comparisons of wait_until): ` +
  `${failures.length} failure(s)`);
process.exit(failures.length ? 1 : 0);
