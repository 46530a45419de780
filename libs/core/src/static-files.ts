/*
 * A static file server behind the gate (express.static, @fastify/static, serve-static) serves one
 * file under several URLs: a directory's index file as "dir/index.html", "dir/" and "dir" (Fastify
 * answers it, Express redirects to "dir/"), and, with its `extensions` option, "report.html" as
 * "report" too. A rule priced on one of them must price them all, or the file is served free under
 * another (a rule on "*.html" and a request for "report"; a rule on "/docs/secret/" and one for
 * "/docs/secret/index.html"). So a path is priced as every URL of each file it may be served from.
 * A precompressed sibling ("report.html.gz", which @fastify/static's preCompressed, nginx's
 * gzip_static and others serve for "report.html") holds the same page: it is priced as that file.
 */

/** How the static file servers behind the gate map URLs to files. */
export interface StaticFiles {
  /** Index file names a directory URL serves; default ["index.html"], as express.static and @fastify/static. */
  index?: readonly string[];
  /**
   * Extensions tried on a URL naming no file (express.static's and @fastify/static's `extensions`,
   * without the dot); default none. Read on names with no extension only ("report" and ".secret"
   * as "report.html" and ".secret.html"; "notes.txt" is not "notes.txt.html"), as the servers try them.
   */
  extensions?: readonly string[];
  /**
   * Suffixes of precompressed siblings, without the dot; default ["br", "gz", "deflate", "zst"]:
   * "report.html.gz" is priced as "report.html" (a URL no rule names is never priced by it).
   */
  precompressed?: readonly string[];
}

export const DEFAULT_STATIC_FILES: Required<StaticFiles> = {
  index: ['index.html'],
  extensions: [],
  precompressed: ['br', 'gz', 'deflate', 'zst'],
};

/** A name a path may end with: no "/", no ".." and nothing a URL would escape or cut. */
const FILE_NAME = /^[A-Za-z0-9._~!$&'()*+,=@-]+$/;

/** Refuses index names and suffixes that are no file name (a "/" in one would price other paths). */
export function checkStaticFiles(files: StaticFiles): Required<StaticFiles> {
  const index = files.index ?? DEFAULT_STATIC_FILES.index;
  const extensions = files.extensions ?? DEFAULT_STATIC_FILES.extensions;
  const precompressed = files.precompressed ?? DEFAULT_STATIC_FILES.precompressed;
  for (const name of [...index, ...extensions, ...precompressed])
    if (typeof name !== 'string' || !FILE_NAME.test(name) || name === '.' || name === '..')
      throw new TypeError(`staticFiles: ${JSON.stringify(name)} is not a file name`);
  const withoutDot = (suffix: string) => suffix.replace(/^\./, '');
  return { index: [...index], extensions: extensions.map(withoutDot), precompressed: precompressed.map(withoutDot) };
}

/**
 * The other paths (as requestPath() spells them) under which a static file server may serve what
 * `path` serves. A path's twin with or without a trailing slash is left out: priceOfSpelling reads it.
 * Names are compared case-blind (index files, extensions, suffixes): a case-insensitive disk serves
 * "report.html.GZ" as "report.html.gz", and a spelling too many only ever raises a price.
 */
export function staticFileSpellings(path: string, files: Required<StaticFiles>): string[] {
  const urls = new Set<string>();
  const addUrlsOf = (file: string) => {
    for (const url of urlsOfFile(file, files)) urls.add(url);
  };
  for (const file of filesServedAt(path, files)) addUrlsOf(file);
  // A precompressed sibling holds the file it compresses: that file's URLs too, not the files its
  // name might be read as ("archive.gz" compresses "archive", never "archive.html"). One suffix: no
  // server serves "report.html.gz.br" for "report.html".
  const directory = path.slice(0, path.lastIndexOf('/') + 1);
  for (const suffix of files.precompressed) {
    const compressed = withoutEnding(path.slice(directory.length), suffix);
    if (compressed !== undefined) addUrlsOf(directory + compressed);
  }
  for (const twin of [path, path.endsWith('/') ? path.slice(0, -1) : `${path}/`]) urls.delete(twin);
  return [...urls];
}

/** The files a static server may serve at `path`: itself, a directory's index files, itself with an extension. */
function filesServedAt(path: string, { index, extensions }: Required<StaticFiles>): string[] {
  const lastSegment = path.slice(path.lastIndexOf('/') + 1);
  const served = path.endsWith('/') ? index.map((name) => path + name) : [path];
  if (lastSegment !== '' && !isIndexName(lastSegment, index)) {
    for (const name of index) served.push(`${path}/${name}`);
    // Only on a name with no extension, as the servers read it (path.extname: a leading dot is no
    // extension, ".secret" has none): "notes.txt" is a file of its own (the server tries extensions
    // on a name it finds no file for, which the gate cannot know), or every free file beside paid
    // "*.html" ones would cost their price.
    if (lastSegment.lastIndexOf('.') <= 0) for (const extension of extensions) served.push(`${path}.${extension}`);
  }
  return served;
}

/** Every URL of a file: itself, its directory's with and without the slash (an index file), its name without the extension. */
function urlsOfFile(file: string, { index, extensions }: Required<StaticFiles>): string[] {
  const urls = [file];
  const directory = file.slice(0, file.lastIndexOf('/') + 1);
  const name = file.slice(directory.length);
  if (isIndexName(name, index)) {
    urls.push(directory);
    if (directory.length > 1) urls.push(directory.slice(0, -1));
  }
  for (const extension of extensions) {
    const bare = withoutEnding(name, extension);
    if (bare !== undefined) urls.push(directory + bare);
  }
  return urls;
}

/** Case-blind, as a case-insensitive disk compares names ("ſ" and "K" fold to "s" and "k" too). */
const fold = (text: string) => text.toUpperCase().toLowerCase();

const isIndexName = (name: string, index: readonly string[]) => index.some((one) => fold(one) === fold(name));

/** `name` without the `.suffix` it ends with (case-blind), or undefined: a name that is the suffix alone has none. */
function withoutEnding(name: string, suffix: string): string | undefined {
  const ending = fold(`.${suffix}`);
  if (name.length > ending.length && fold(name.slice(-ending.length)) === ending) return name.slice(0, -ending.length);
  // A letter that folds to two ("ﬆ" to "st") leaves the lengths apart: read the folded name.
  const folded = fold(name);
  return folded.length > ending.length && folded.endsWith(ending) ? folded.slice(0, -ending.length) : undefined;
}
