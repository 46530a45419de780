/**
 * The fetch for key directories when the options name none. A signed request names the host of its
 * key directory, and a public name can resolve to an address inside the site's own network: only
 * where the runtime's fetch cannot reach that network (Cloudflare Workers, Deno Deploy) is it used.
 * Anywhere else (Node behind a Request-based host, Bun, Deno on a server) no directory is fetched:
 * signed requests stay unverified, the policy decides (charged, never allowed), and the gate says
 * once how to verify them.
 */
export function runtimeKeyDirectoryFetch(warn: (message: string) => void): typeof fetch {
  if (onIsolatedEdge()) return (input, init) => globalThis.fetch(input, init);
  let told = false;
  return () => {
    if (!told) {
      told = true;
      warn(
        'Web Bot Auth key directories are fetched by default only on Cloudflare Workers and Deno Deploy, whose fetch cannot reach your own network; on Node pass webBotAuth: { fetch: nodeKeyDirectoryFetch() } from the node entry of this package (it checks the addresses a name resolves to), on another edge host webBotAuth: { fetch }; until then signed requests stay unverified',
      );
    }
    return Promise.reject(new Error('no key directory is fetched on this runtime without webBotAuth.fetch'));
  };
}

/** Cloudflare Workers (its navigator says so) or Deno Deploy (its deployment id is set). */
function onIsolatedEdge(): boolean {
  const runtime = globalThis as {
    navigator?: { userAgent?: unknown };
    Deno?: { env?: { get(name: string): string | undefined } };
  };
  if (runtime.navigator?.userAgent === 'Cloudflare-Workers') return true;
  try {
    return Boolean(runtime.Deno?.env?.get('DENO_DEPLOYMENT_ID'));
  } catch {
    return false; // Deno without permission to read the environment: not known to be Deploy
  }
}
