import { useState } from 'preact/hooks';
import { PublisherClient } from '@crawlgate/publisher';
import { isApiKeyFormat } from '@crawlgate/core';
import { FieldError, FormErrors } from '../components/form-errors';
import { OnceOnly } from '../components/once-only';
import { useFormSubmit } from '../use-form-submit';

type Mode = 'password' | 'key' | 'register';

/**
 * Three ways in: email and password (the API's login issues a new key and retires the old one, so
 * the form says so), an existing API key pasted as is, or a new account.
 */
export function LoginPage({ apiUrl, onSignedIn }: { apiUrl: string; onSignedIn(apiKey: string): void }) {
  const [mode, setMode] = useState<Mode>('password');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [name, setName] = useState('');
  const [apiKey, setApiKey] = useState('');
  const form = useFormSubmit();
  const [registeredKey, setRegisteredKey] = useState<string | null>(null);

  const submit = (event: Event) => {
    event.preventDefault();
    // apiUrl is this page's own origin (allowPlainHttp): what is typed here came over that connection already.
    const client = new PublisherClient({ apiUrl, maxRetries: 0, allowPlainHttp: true });
    return form.run(async () => {
      if (mode === 'password') {
        onSignedIn((await client.login({ email, password })).api_key);
      } else if (mode === 'register') {
        setRegisteredKey(
          (await client.register({ email, password, ...(name.trim() ? { name: name.trim() } : {}) })).api_key,
        );
      } else {
        const key = apiKey.trim();
        if (!isApiKeyFormat(key)) throw new Error('An API key starts with xk_pub_');
        await new PublisherClient({ apiUrl, apiKey: key, maxRetries: 0, allowPlainHttp: true }).me();
        onSignedIn(key);
      }
    });
  };

  if (registeredKey) {
    return (
      <main class="login">
        <h1>Crawlgate</h1>
        <OnceOnly
          title="Your account is ready"
          values={[{ label: 'API key', value: registeredKey, hint: 'For the CLI, the SDK and this dashboard.' }]}
          onDone={() => onSignedIn(registeredKey)}
        />
      </main>
    );
  }

  return (
    <main class="login">
      <h1>Crawlgate</h1>
      <p class="muted">Publisher dashboard</p>
      <div class="tabs" role="tablist">
        {(['password', 'key', 'register'] as const).map((m) => (
          <button
            type="button"
            role="tab"
            aria-selected={mode === m}
            class={mode === m ? 'active' : 'secondary'}
            key={m}
            onClick={() => (setMode(m), form.clear())}
          >
            {{ password: 'Sign in', key: 'Use an API key', register: 'Create account' }[m]}
          </button>
        ))}
      </div>
      <form onSubmit={(event) => void submit(event)} aria-label={mode === 'register' ? 'Create account' : 'Sign in'}>
        {mode === 'key' ? (
          <label>
            API key
            <input
              name="api_key"
              type="password"
              value={apiKey}
              onInput={(e) => setApiKey((e.target as HTMLInputElement).value)}
              placeholder="xk_pub_…"
              autoComplete="off"
              required
            />
          </label>
        ) : (
          <>
            <label>
              Email
              <input
                name="email"
                type="email"
                value={email}
                onInput={(e) => setEmail((e.target as HTMLInputElement).value)}
                autoComplete="username"
                required
              />
              <FieldError form={form} field="email" />
            </label>
            <label>
              Password
              <input
                name="password"
                type="password"
                value={password}
                onInput={(e) => setPassword((e.target as HTMLInputElement).value)}
                autoComplete={mode === 'register' ? 'new-password' : 'current-password'}
                required
              />
              <FieldError form={form} field="password" />
            </label>
            {mode === 'register' && (
              <label>
                Name (optional)
                <input name="name" value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
                <FieldError form={form} field="name" />
              </label>
            )}
          </>
        )}
        {mode === 'password' && (
          <p class="muted small">
            Signing in issues a new API key: a key you use elsewhere (CLI, scripts) stops working. To keep it, choose
            “Use an API key”.
          </p>
        )}
        <button type="submit" disabled={form.busy}>
          {mode === 'register' ? 'Create account' : 'Sign in'}
        </button>
        <FormErrors form={form} />
      </form>
    </main>
  );
}
