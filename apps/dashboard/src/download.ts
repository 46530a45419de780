/**
 * Saves text the page already holds as a file. The CSV comes from an API call that sends the key
 * in a header, so the download is made here from a Blob: the key never goes into a link.
 */
export function downloadText(text: string, fileName: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  // Revoked after the click has started the download, not before.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}
