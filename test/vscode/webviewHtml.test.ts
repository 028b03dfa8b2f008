/**
 * Every webview page is self-contained under a strict Content-Security-Policy: built by
 * `webviewHtml` inside the extension host from the installed extension's own files, each page
 * carries its bundle, its stylesheets and the codicon font, names no resource (no `src`/`href`
 * outside its own `<script>`/`<style>` text), and every script and style element has the page's
 * nonce. The inline copies are compared with the files on disk, byte for byte.
 */
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { webviewHtml } from '../../src/editor/webviewHtml';
import { EXTENSION_ID } from './probe';

/** The element texts of `tag` in `html` (what lies between `<tag …>` and `</tag>`), with their opening tags. */
function elements(html: string, tag: string): { open: string; text: string }[] {
  const re = new RegExp(`(<${tag}\\b[^>]*>)([\\s\\S]*?)</${tag}>`, 'gi');
  return [...html.matchAll(re)].map((m) => ({ open: m[1], text: m[2] }));
}

describe('webview pages: self-contained, strict CSP', () => {
  let ext: vscode.Extension<unknown>;
  before(() => {
    const e = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(e, `${EXTENSION_ID} is installed`);
    ext = e;
  });

  it('each bundle in dist/webview/ becomes a page with its script, styles and the codicon font inside, and no resource link', () => {
    const dir = path.join(ext.extensionPath, 'dist', 'webview');
    const scripts = fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.js'))
      .map((f) => f.slice(0, -3));
    assert.ok(scripts.includes('shardEditor') && scripts.includes('searchPanel'), scripts.join(', '));
    const ttf = fs.readFileSync(path.join(ext.extensionPath, 'dist', 'media', 'codicon.ttf'));
    const uplotCss = fs.readFileSync(path.join(ext.extensionPath, 'dist', 'media', 'uPlot.min.css'), 'utf8');
    const commonCss = fs.readFileSync(path.join(ext.extensionPath, 'media', 'common.css'), 'utf8');
    for (const script of scripts) {
      const html = webviewHtml(ext.extensionUri, { script, title: `<${script}> & "page"`, styles: ['dist/media/uPlot.min.css'] });
      const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]*)">/.exec(html)?.[1];
      assert.ok(csp, `${script}: CSP meta`);
      const nonce = /script-src 'nonce-([A-Za-z0-9+/=]+)'/.exec(csp)?.[1];
      assert.ok(nonce, `${script}: script-src is the nonce alone: ${csp}`);
      const directives = new Map(
        csp
          .split(';')
          .map((d) => d.trim().split(/\s+/) as [string, ...string[]])
          .map(([k, ...v]) => [k, v]),
      );
      assert.deepStrictEqual(directives.get('default-src'), ["'none'"], csp);
      assert.deepStrictEqual(directives.get('script-src'), [`'nonce-${nonce}'`], csp);
      assert.deepStrictEqual(directives.get('style-src'), [`'nonce-${nonce}'`, 'blob:'], csp);
      assert.deepStrictEqual(directives.get('font-src'), ['data:'], csp);
      // The title is escaped text, never markup.
      assert.ok(html.includes(`<title>&#60;${script}&#62; &#38; &#34;page&#34;</title>`), `${script}: title escaped`);

      const scriptEls = elements(html, 'script');
      assert.strictEqual(scriptEls.length, 1, `${script}: one script element`);
      assert.strictEqual(scriptEls[0].open, `<script nonce="${nonce}">`);
      const bundle = fs.readFileSync(path.join(dir, `${script}.js`), 'utf8');
      assert.strictEqual(scriptEls[0].text.trim(), bundle.replace(/<\/script/gi, '<\\/script').trim(), `${script}: the bundle, inline`);

      const styleEls = elements(html, 'style');
      for (const s of styleEls) assert.ok(s.open.startsWith(`<style nonce="${nonce}"`), `${script}: ${s.open}`);
      const styleTexts = styleEls.map((s) => s.text.trim());
      assert.ok(styleTexts.includes(commonCss.trim()), `${script}: media/common.css inline`);
      assert.ok(styleTexts.includes(uplotCss.trim()), `${script}: dist/media/uPlot.min.css inline`);
      const font = /url\("data:font\/ttf;base64,([A-Za-z0-9+/=]+)"\)/.exec(styleEls[0].text)?.[1];
      assert.ok(font, `${script}: codicon font as a data: URL`);
      assert.ok(Buffer.from(font, 'base64').equals(ttf), `${script}: the data: URL is codicon.ttf`);

      // Outside its own script and style text, the page names no resource.
      const outside = html.replace(/<(script|style)\b[^>]*>[\s\S]*?<\/\1>/gi, '');
      assert.doesNotMatch(outside, /\s(src|href)\s*=/i, `${script}: a resource link`);
    }
  });
});
