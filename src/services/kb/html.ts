/** A Map, so that "&constructor;" finds nothing rather than a built-in. */
const ENTITIES = new Map(Object.entries({ amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " }));

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
    if (name[0] === "#") {
      const code = name[1] === "x" || name[1] === "X" ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES.get(name.toLowerCase()) ?? whole;
  });
}

/*
 * HTML from uploads and from third-party pages is read by scanning forward with indexOf and
 * sticky patterns, never with a pattern that searches ahead for a closing tag: such patterns
 * rescan the rest of the page from every opener that has no closer, which is quadratic, and a
 * 10 MiB page of openers would hold the event loop for hours.
 */

/** Content dropped whole, with its tags. */
const RAW_TEXT = new Set(["script", "style", "noscript", "template", "svg", "head"]);
/** Tags that end a line of text. */
const LINE_BREAKS = new Set(["br", "/p", "/div", "/li", "/tr", "/section", "/article"]);
const TAG_NAME = /\/?[A-Za-z][A-Za-z0-9]*/y;

/** Where the closing tag `</name>` starts at or after `from`, and where it ends; undefined when there is none. */
function findClose(html: string, name: string, from: number): { start: number; end: number } | undefined {
  const closer = new RegExp(`</${name}\\s*>`, "gi");
  closer.lastIndex = from;
  const m = closer.exec(html);
  return m ? { start: m.index, end: m.index + m[0].length } : undefined;
}

interface Scan {
  /** Text between tags, in order; tags are replaced by what `onTag` returns. */
  text: string[];
}

/**
 * Walks the markup once. A tag that never closes runs to the end of the page (as browsers read
 * it); a '<' that starts no tag is text.
 */
function scan(html: string, out: Scan, headings: boolean): void {
  // A closing tag found missing once is missing for every later opener of that name too.
  const noCloseAfter = new Map<string, number>();
  let i = 0;
  while (i < html.length) {
    const lt = html.indexOf("<", i);
    if (lt === -1) {
      out.text.push(html.slice(i));
      return;
    }
    out.text.push(html.slice(i, lt));
    if (html.startsWith("<!--", lt)) {
      const end = html.indexOf("-->", lt + 4);
      out.text.push(" ");
      if (end === -1) return;
      i = end + 3;
      continue;
    }
    TAG_NAME.lastIndex = lt + 1;
    const named = TAG_NAME.exec(html);
    const special = html[lt + 1] === "!" || html[lt + 1] === "?";
    if (!named && !special) {
      out.text.push("<");
      i = lt + 1;
      continue;
    }
    const gt = html.indexOf(">", lt + 1);
    if (gt === -1) return;
    const name = named ? named[0].toLowerCase() : "";
    i = gt + 1;
    if (RAW_TEXT.has(name)) {
      const close = findClose(html, name, i);
      out.text.push(" ");
      if (!close) return;
      i = close.end;
    } else if (headings && /^h[1-6]$/.test(name) && i < (noCloseAfter.get(name) ?? Infinity)) {
      const close = findClose(html, name, i);
      if (!close) {
        noCloseAfter.set(name, i);
        out.text.push(" ");
        continue;
      }
      const inner: Scan = { text: [] };
      scan(html.slice(i, close.start), inner, false);
      const title = inner.text.join("").replace(/\s+/g, " ").trim();
      out.text.push(`\n\n${"#".repeat(Number(name[1]))} ${title}\n\n`);
      i = close.end;
    } else if (LINE_BREAKS.has(name)) out.text.push("\n");
    else if (name === "li") out.text.push("\n- ");
    else out.text.push(" ");
  }
}

/** The page's <title>, if any. */
export function htmlTitle(html: string): string | undefined {
  const opener = /<title\b/gi;
  const m = opener.exec(html);
  if (!m) return undefined;
  const gt = html.indexOf(">", m.index + m[0].length);
  if (gt === -1) return undefined;
  const close = findClose(html, "title", gt + 1);
  if (!close) return undefined;
  const title = decodeEntities(html.slice(gt + 1, close.start)).replace(/\s+/g, " ").trim();
  return title || undefined;
}

/**
 * Readable text of an HTML page for grounding: scripts, styles and markup go, headings become
 * Markdown headings (so the page splits into sections like the knowledge base does).
 */
export function htmlToText(html: string): string {
  const out: Scan = { text: [] };
  scan(html, out, true);
  return decodeEntities(out.text.join(""))
    .replace(/[ \t\f\v\r]+/g, " ")
    .replace(/ ?\n ?/g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}
