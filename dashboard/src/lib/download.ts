/**
 * Hands `text` to the browser as a file named `filename`: what the API answers with a bearer token,
 * which a plain link cannot send, is fetched by the app and saved this way.
 */
export function saveAsFile(text: string, type: string, filename: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = Object.assign(window.document.createElement('a'), { href: url, download: filename });
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
