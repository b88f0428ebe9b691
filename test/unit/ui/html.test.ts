import { describe, expect, it } from 'vitest';
import { duration, prettyJson } from '../../../src/ui/format.js';
import { escapeHtml, html, queryString, raw } from '../../../src/ui/html.js';
import { localPath } from '../../../src/ui/session.js';

describe('the html template', () => {
  it('escapes every interpolated value for text and double- or single-quoted attributes', () => {
    const value = `<a href="x" onclick='y'>&\``;
    expect(html`<p title="${value}">${value}</p>`.value).toBe(
      '<p title="&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&#96;">&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&#96;</p>',
    );
  });

  it('keeps nested templates and raw text as HTML, joins lists, and drops null, undefined and false', () => {
    const items = ['<1>', '2'].map((i) => html`<li>${i}</li>`);
    expect(html`<ul>${items}</ul>${null}${undefined}${false}${0}${raw('<br>')}`.value).toBe('<ul><li>&lt;1&gt;</li><li>2</li></ul>0<br>');
  });

  it('never lets a value close its attribute', () => {
    for (const attack of ['" onmouseover="x', "' onmouseover='x", '"><script>x</script>']) {
      expect(escapeHtml(attack)).not.toMatch(/["'<>]/);
    }
  });

  it('builds query strings without empty values', () => {
    expect(queryString({ status: 'completed', type: '', q: 'a b&c', cursor: undefined })).toBe('?status=completed&q=a+b%26c');
    expect(queryString({})).toBe('');
  });
});

describe('dashboard formats', () => {
  it('says durations in at most two units', () => {
    expect([0, 45_000, 192_000, 3_600_000, 7_500_000, 90_000_000, 86_400_000 * 3].map(duration)).toEqual(['0 s', '45 s', '3 min 12 s', '1 h', '2 h 5 min', '1 d 1 h', '3 d']);
  });

  it('indents stored JSON and shows other text as it is', () => {
    expect(prettyJson('{"a":[1]}')).toBe('{\n  "a": [\n    1\n  ]\n}');
    expect(prettyJson('not json')).toBe('not json');
  });

  it('takes only paths of its own as where to go after sign-in', () => {
    expect(localPath('/operations?status=failed')).toBe('/operations?status=failed');
    for (const bad of ['//evil.example', '/\\evil.example', 'https://evil.example', 'operations', '/a b', 42]) expect(localPath(bad)).toBeUndefined();
  });
});
