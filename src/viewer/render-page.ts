/** The viewer's page as one self-contained HTML document: its script and styles inlined, the data embedded as JSON (spec/viewer.md VIEW-1). */
import { readFileSync } from 'node:fs';
import type { ViewData } from './view-data.js';

/**
 * The page's own files, in `src/viewer` and, after the build, `dist/viewer`: named through the
 * folder's name so they resolve from this module's folder and from the executables' bundle in
 * `dist/bundle` alike (CLI-34).
 */
const ASSETS = { script: new URL('../viewer/page.js', import.meta.url), styles: new URL('../viewer/page.css', import.meta.url) };

let assets: { script: string; styles: string } | undefined;

/** The page's script and styles, read once. */
function pageAssets(): { script: string; styles: string } {
  assets ??= { script: readFileSync(ASSETS.script, 'utf8'), styles: readFileSync(ASSETS.styles, 'utf8') };
  return assets;
}

/**
 * A value as JSON that is safe inside `<script type="application/json">` (VIEW-1): `<` is written
 * `\u003c`, so no `</script` or `<!--` can end or bend the element, and U+2028 and U+2029 are
 * escaped as well; `JSON.parse` of the element's text gives the value back exactly.
 */
export function embedJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<\u2028\u2029]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Text made safe for HTML content and attribute values. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

/** Inline code that cannot end its own element early. */
function inline(code: string, tag: 'script' | 'style'): string {
  return code.replace(new RegExp(`</(${tag})`, 'gi'), '<\\/$1');
}

/**
 * The whole page. It loads nothing: a Content-Security-Policy allows no source at all beyond its
 * own inline script and styles (VIEW-1), so even a link in the data cannot make a request.
 */
export function renderPage(data: ViewData): string {
  const { script, styles } = pageAssets();
  const title = `Trace ${data.source.split(/[\\/]/).pop() ?? data.source}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
${inline(styles, 'style')}
</style>
</head>
<body>
<noscript>This trace view needs JavaScript to draw the tree, the timeline and the cost.</noscript>
<script type="application/json" id="trace-data">${embedJson(data)}</script>
<script>
${inline(script, 'script')}
</script>
</body>
</html>
`;
}
