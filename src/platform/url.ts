/** The text as an absolute URL, or undefined when it is not one (instead of URL's TypeError). */
export function parseUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}
