// The TypeScript API reference, for `make docs`: one HTML page per entry point of the npm
// packages, from the committed declarations (`bindings-node/*.d.ts`, the same files
// `shardroute-wasm` ships, and `bindings-wasm/route.d.ts`, its route-only build), read
// with the TypeScript compiler the Node package already has as a devDependency. Every
// exported declaration gets an anchor, its signature and its JSDoc; members of classes
// and interfaces too. A name in backquotes that the page documents becomes a link to it.
//
// Usage: node scripts/api-docs-ts.mjs OUT_DIR
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const ts = createRequire(join(root, 'bindings-node', 'package.json'))('typescript');

/** [entry point, declaration file, page]. */
const ENTRIES = [
  ['shardroute (and shardroute-wasm)', 'bindings-node/index.d.ts', 'index.html'],
  ['shardroute/redis', 'bindings-node/redis.d.ts', 'redis.html'],
  ['shardroute/etcd (and shardroute-wasm/etcd)', 'bindings-node/etcd.d.ts', 'etcd.html'],
  ['shardroute/zookeeper', 'bindings-node/zookeeper.d.ts', 'zookeeper.html'],
  ['shardroute/http (and shardroute-wasm/http)', 'bindings-node/http.d.ts', 'http.html'],
  ['shardroute-wasm/route', 'bindings-wasm/route.d.ts', 'route.html'],
];
const STYLE = `body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;line-height:1.45}
code,pre{font-family:ui-monospace,monospace;font-size:.92em}pre.sig{background:#f4f4f4;padding:.5rem;overflow-x:auto;white-space:pre-wrap}
.doc{margin:0 0 1.2rem 1.2rem}h3{margin-bottom:.2rem}nav li{display:inline;margin-right:.6rem}`;

const escape = (text) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The last `/** ... *\/` comment before a node, as plain text. */
function jsDoc(source, node) {
  const ranges = ts.getLeadingCommentRanges(source.text, node.pos) ?? [];
  const docs = ranges.filter((range) => source.text.startsWith('/**', range.pos));
  if (docs.length === 0) return '';
  const last = docs[docs.length - 1];
  return source.text
    .slice(last.pos + 3, last.end - 2)
    .split('\n')
    .map((line) => line.replace(/^\s*\* ?/, ''))
    .join('\n')
    .trim();
}

const isExported = (node) => (ts.getCombinedModifierFlags(node) & ts.ModifierFlags.Export) !== 0;

function nameOf(node) {
  if (node.name && ts.isIdentifier(node.name)) return node.name.text;
  if (node.name && ts.isStringLiteral(node.name)) return node.name.text;
  if (ts.isConstructorDeclaration(node) || ts.isConstructSignatureDeclaration(node)) return 'constructor';
  if (ts.isCallSignatureDeclaration(node)) return '(call)';
  if (ts.isIndexSignatureDeclaration(node)) return '[index]';
  return null;
}

/** A declaration's text without `export declare` and without its members' body. */
function signature(source, node) {
  let text = node.getText(source);
  if (ts.isClassDeclaration(node) || ts.isInterfaceDeclaration(node) || ts.isModuleDeclaration(node) || ts.isEnumDeclaration(node)) {
    text = text.slice(0, text.indexOf('{')).trim();
  }
  return text.replace(/^export\s+/, '').replace(/^declare\s+/, '').replace(/\s+/g, ' ').trim();
}

function entries(source) {
  const found = [];
  const byAnchor = new Map();
  const add = (entry) => {
    const earlier = byAnchor.get(entry.anchor);
    if (earlier) {
      earlier.signature += `\n${entry.signature}`; // an overload
      if (!earlier.doc) earlier.doc = entry.doc;
      return earlier;
    }
    byAnchor.set(entry.anchor, entry);
    found.push(entry);
    return entry;
  };
  for (const statement of source.statements) {
    if (ts.isVariableStatement(statement) && isExported(statement)) {
      for (const declaration of statement.declarationList.declarations) {
        add({ anchor: declaration.name.getText(source), kind: 'const', signature: declaration.getText(source), doc: jsDoc(source, statement), members: [] });
      }
      continue;
    }
    if (ts.isExportDeclaration(statement)) {
      const text = statement.getText(source);
      add({ anchor: `export-${found.length}`, kind: 'export', signature: text, doc: jsDoc(source, statement), members: [] });
      continue;
    }
    const name = nameOf(statement);
    if (!name || !isExported(statement)) continue;
    const kind = ts.SyntaxKind[statement.kind].replace(/Declaration$/, '').toLowerCase();
    const entry = add({ anchor: name, kind, signature: signature(source, statement), doc: jsDoc(source, statement), members: [] });
    if (ts.isClassDeclaration(statement) || ts.isInterfaceDeclaration(statement)) {
      const members = new Map(entry.members.map((member) => [member.anchor, member]));
      for (const member of statement.members) {
        const memberName = nameOf(member);
        if (!memberName || memberName.startsWith('#')) continue;
        const flags = ts.getCombinedModifierFlags(member);
        if (flags & ts.ModifierFlags.Private) continue;
        const anchor = `${name}.${memberName}`;
        const text = member.getText(source).replace(/\s+/g, ' ').trim();
        const earlier = members.get(anchor);
        if (earlier) {
          earlier.signature += `\n${text}`;
          if (!earlier.doc) earlier.doc = jsDoc(source, member);
          continue;
        }
        const made = { anchor, signature: text, doc: jsDoc(source, member) };
        members.set(anchor, made);
        entry.members.push(made);
      }
    }
  }
  return found;
}

function renderText(text, anchors, pages) {
  return text
    .split(/\n\s*\n/)
    .filter((paragraph) => paragraph.trim())
    .map((paragraph) => {
      const parts = paragraph.split(/(`[^`\n]+`)/);
      const html = parts
        .map((part) => {
          if (!/^`[^`]+`$/.test(part)) return escape(part);
          const inner = part.slice(1, -1);
          const shown = `<code>${escape(inner)}</code>`;
          const target = inner.split('(')[0].replace(/\.$/, '');
          if (anchors.has(target)) return `<a href="#${escape(target)}">${shown}</a>`;
          if (pages.has(target)) return `<a href="${pages.get(target)}">${shown}</a>`;
          return shown;
        })
        .join('');
      // A JSDoc list keeps its lines.
      return /^\s*- /m.test(paragraph) ? `<p style="white-space:pre-line">${html}</p>` : `<p>${html}</p>`;
    })
    .join('\n');
}

function renderSignature(text, anchors, self) {
  return text
    .split(/(\W+)/)
    .map((part) => (anchors.has(part) && part !== self ? `<a href="#${part}">${part}</a>` : escape(part)))
    .join('');
}

function page(title, file, source, found, pages) {
  const anchors = new Set(found.flatMap((entry) => [entry.anchor, ...entry.members.map((member) => member.anchor)]));
  const header = source.statements.length ? jsDoc(source, source.statements[0]) : '';
  const leading = (ts.getLeadingCommentRanges(source.text, 0) ?? [])
    .filter((range) => source.text.startsWith('//', range.pos))
    .map((range) => source.text.slice(range.pos + 2, range.end).trim())
    .join('\n');
  const nav = ENTRIES.map(([name, , href]) => `<li><a href="${href}">${escape(name)}</a></li>`).join(' ');
  const body = [`<h1><code>${escape(title)}</code></h1>`, `<p>From <code>${escape(file)}</code>.</p>`];
  if (leading) body.push(renderText(leading.replace(/\n(?!\n)/g, ' '), anchors, pages));
  void header;
  body.push('<h2>Contents</h2><ul>');
  for (const entry of found) body.push(`<li><a href="#${escape(entry.anchor)}"><code>${escape(entry.anchor)}</code></a> (${entry.kind})</li>`);
  body.push('</ul>');
  for (const entry of found) {
    body.push(`<h3 id="${escape(entry.anchor)}"><code>${escape(entry.anchor)}</code></h3>`);
    body.push(`<pre class="sig">${renderSignature(entry.signature, anchors, entry.anchor)}</pre>`);
    body.push(`<div class="doc">${renderText(entry.doc, anchors, pages)}`);
    for (const member of entry.members) {
      body.push(`<h4 id="${escape(member.anchor)}"><code>${escape(member.anchor)}</code></h4>`);
      body.push(`<pre class="sig">${renderSignature(member.signature, anchors, null)}</pre>`);
      body.push(renderText(member.doc, anchors, pages));
    }
    body.push('</div>');
  }
  return `<!doctype html><html lang=en><meta charset=utf-8><title>${escape(title)} — shardroute TypeScript API</title><style>${STYLE}</style><nav><a href="../index.html">shardroute API reference</a><ul>${nav}</ul></nav>\n${body.join('\n')}</html>\n`;
}

const out = process.argv[2];
if (!out) throw new Error('usage: node scripts/api-docs-ts.mjs OUT_DIR');
mkdirSync(out, { recursive: true });
// `shardroute/etcd` in a doc comment links to that page.
const pages = new Map(ENTRIES.map(([name, , href]) => [name.split(' ')[0], href]));
const counts = [];
for (const [title, file, href] of ENTRIES) {
  const source = ts.createSourceFile(file, readFileSync(join(root, file), 'utf8'), ts.ScriptTarget.Latest, true);
  const found = entries(source);
  writeFileSync(join(out, href), page(title, file, source, found, pages));
  counts.push(`${title.split(' ')[0]} ${found.length}`);
}
console.log(`TypeScript API: ${counts.join(', ')} declarations -> ${out}`);
