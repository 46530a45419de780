/** A TCP port: 1 to 65535, written without leading zeros (so one port has one spelling). */
const PORT = String.raw`(?:[1-9]\d{0,3}|[1-5]\d{4}|6[0-4]\d{3}|65[0-4]\d{2}|655[0-2]\d|6553[0-5])`;

/**
 * A host name as a site is known by: lower-case labels, an optional port, no scheme or path. The
 * API stores only such domains; the middleware refuses site terms with any other, since the
 * domain reaches response headers (a license Link) where CR/LF would break every answer.
 */
export const DOMAIN_PATTERN = new RegExp(
  String.raw`^(?=.{1,253}(:|$))([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*(:${PORT})?$`,
);
