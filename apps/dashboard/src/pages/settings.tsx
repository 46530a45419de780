import { useState } from 'preact/hooks';
import { payoutProofMessageOf, type Publisher } from '@crawlgate/publisher';
import { useSession } from '../api-context';
import { browserWallet, signWithBrowserWallet } from '../browser-wallet';
import { ErrorNote } from '../components/error-note';
import { FieldError, FormErrors } from '../components/form-errors';
import { OnceOnly } from '../components/once-only';
import { useDialogFocus } from '../use-dialog-focus';
import { useFormSubmit } from '../use-form-submit';
import { useLoad } from '../use-load';

export function SettingsPage() {
  const { client } = useSession();
  const me = useLoad(() => client.me(), [client]);
  if (!me.data)
    return (
      <section>
        <h2>Settings</h2>
        {me.loading ? <p class="muted">Loading…</p> : <ErrorNote error={me.error} />}
      </section>
    );
  return (
    <section>
      <h2>Settings</h2>
      <p class="muted">Signed in as {me.data.email}</p>
      <PayoutForm publisher={me.data} onSaved={me.reload} />
      <NameForm publisher={me.data} onSaved={me.reload} />
      <PasswordForm />
      <ApiKeyPanel />
    </section>
  );
}

/**
 * Payments go straight to this address, so changing it takes the account password too. An address
 * another publisher names needs its signature of the text the API answers with (payout_proof).
 */
function PayoutForm({ publisher, onSaved }: { publisher: Publisher; onSaved(): void }) {
  const { client } = useSession();
  const [address, setAddress] = useState(publisher.payout_address ?? '');
  const [password, setPassword] = useState('');
  const [proofMessage, setProofMessage] = useState<string | null>(null);
  const [proof, setProof] = useState('');
  const wallet = browserWallet();
  const form = useFormSubmit();
  const [status, setStatus] = useState<string | null>(null);

  const submit = (event: Event) => {
    event.preventDefault();
    setStatus(null);
    return form.run(async () => {
      const changes = {
        payout_address: address.trim() || null,
        ...(proofMessage !== null && proof.trim() ? { payout_proof: proof.trim() } : {}),
      };
      const updated = await client.updateMe(changes, { password }).catch((error: unknown) => {
        setProofMessage(payoutProofMessageOf(error) ?? proofMessage);
        throw error;
      });
      setPassword('');
      setProofMessage(null);
      setProof('');
      setStatus(
        updated.payout_address
          ? `Payments now go to ${updated.payout_address}.`
          : 'Payout address cleared: your sites cannot charge until you set one.',
      );
      onSaved();
    });
  };

  return (
    <form class="panel" aria-label="Payout address" onSubmit={(event) => void submit(event)}>
      <h3>Payout address</h3>
      <p class="muted">
        Agents pay USDC straight to this wallet; Crawlgate never holds your money. Without one, your sites cannot
        charge.
      </p>
      <label>
        Wallet address
        <input
          name="payout_address"
          value={address}
          onInput={(e) => {
            setAddress((e.target as HTMLInputElement).value);
            // The text to sign names the address: another address needs the API's text for it.
            setProofMessage(null);
          }}
          placeholder="0x…"
          spellcheck={false}
          aria-invalid={Boolean(form.fields.byField.payout_address)}
        />
        <FieldError form={form} field="payout_address" />
      </label>
      {publisher.payout_address_proven && publisher.payout_address === address.trim() && (
        <p class="muted">Proven: this address signed for your account.</p>
      )}
      {proofMessage !== null && (
        <div class="proof" role="group" aria-label="Proof that the address is yours">
          <p>
            Another publisher names this address. If it is yours, sign this text with its wallet (EIP-191 personal_sign,
            as wallets sign messages), here with your browser wallet or elsewhere, and paste the signature; the proof
            takes the address from publishers that named it without one.
          </p>
          <pre class="proof-message">{proofMessage}</pre>
          <label>
            Signature
            <input
              name="payout_proof"
              value={proof}
              onInput={(e) => setProof((e.target as HTMLInputElement).value)}
              placeholder="0x…"
              spellcheck={false}
              aria-invalid={Boolean(form.fields.byField.payout_proof)}
            />
            <FieldError form={form} field="payout_proof" />
          </label>
          {wallet && (
            <button
              type="button"
              class="secondary"
              disabled={form.busy}
              onClick={() =>
                void form.run(async () => setProof(await signWithBrowserWallet(wallet, address.trim(), proofMessage)))
              }
            >
              Sign with your browser wallet
            </button>
          )}
        </div>
      )}
      <label>
        Your password, to confirm
        <input
          name="confirm_password"
          type="password"
          value={password}
          onInput={(e) => setPassword((e.target as HTMLInputElement).value)}
          autoComplete="current-password"
          required
        />
      </label>
      <button type="submit" disabled={form.busy}>
        Save payout address
      </button>
      {status && (
        <p class="ok" role="status">
          {status}
        </p>
      )}
      <FormErrors form={form} />
    </form>
  );
}

function NameForm({ publisher, onSaved }: { publisher: Publisher; onSaved(): void }) {
  const { client } = useSession();
  const [name, setName] = useState(publisher.name ?? '');
  const form = useFormSubmit();
  const [status, setStatus] = useState<string | null>(null);
  const submit = (event: Event) => {
    event.preventDefault();
    setStatus(null);
    return form.run(async () => {
      await client.updateMe({ name: name.trim() || null });
      setStatus('Saved.');
      onSaved();
    });
  };
  return (
    <form class="panel" aria-label="Account name" onSubmit={(event) => void submit(event)}>
      <h3>Account name</h3>
      <label>
        Name
        <input name="name" value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        <FieldError form={form} field="name" />
      </label>
      <button type="submit" disabled={form.busy}>
        Save name
      </button>
      {status && (
        <span class="ok" role="status">
          {status}
        </span>
      )}
      <FormErrors form={form} />
    </form>
  );
}

/** A new password rotates the API key too: whoever held the old password or key is out. */
function PasswordForm() {
  const { client, replaceApiKey } = useSession();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const form = useFormSubmit();
  const [status, setStatus] = useState<string | null>(null);
  const submit = (event: Event) => {
    event.preventDefault();
    setStatus(null);
    return form.run(async () => {
      const { api_key } = await client.changePassword({ current_password: current, new_password: next });
      replaceApiKey(api_key);
      setCurrent('');
      setNext('');
      setStatus(
        'Password changed. Your API key was replaced too: update any script or CLI that used the previous one.',
      );
    });
  };
  return (
    <form class="panel" aria-label="Password" onSubmit={(event) => void submit(event)}>
      <h3>Password</h3>
      <label>
        Current password
        <input
          name="current_password"
          type="password"
          value={current}
          onInput={(e) => setCurrent((e.target as HTMLInputElement).value)}
          autoComplete="current-password"
          required
        />
        <FieldError form={form} field="current_password" />
      </label>
      <label>
        New password
        <input
          name="new_password"
          type="password"
          value={next}
          onInput={(e) => setNext((e.target as HTMLInputElement).value)}
          autoComplete="new-password"
          required
          aria-invalid={Boolean(form.fields.byField.new_password)}
        />
        <FieldError form={form} field="new_password" />
      </label>
      <button type="submit" disabled={form.busy}>
        Change password
      </button>
      {status && (
        <p class="ok" role="status">
          {status}
        </p>
      )}
      <FormErrors form={form} />
    </form>
  );
}

/** A new key replaces the session's at once; the old one stops working everywhere (CLI, scripts). */
function ApiKeyPanel() {
  const { client, replaceApiKey } = useSession();
  const [confirming, setConfirming] = useState(false);
  const [issued, setIssued] = useState<string | null>(null);
  const action = useFormSubmit();
  const rotate = () => {
    setConfirming(false);
    return action.run(async () => {
      const { api_key } = await client.rotateApiKey();
      replaceApiKey(api_key);
      setIssued(api_key);
    });
  };
  return (
    <div class="panel" aria-label="API key">
      <h3>API key</h3>
      {issued ? (
        <OnceOnly
          title="Your new API key"
          values={[
            {
              label: 'API key',
              value: issued,
              hint: 'The previous key has stopped working: update any script or CLI that used it.',
            },
          ]}
          onDone={() => setIssued(null)}
        />
      ) : confirming ? (
        <ConfirmRotation onConfirm={() => void rotate()} onCancel={() => setConfirming(false)} />
      ) : (
        <button type="button" class="secondary" onClick={() => setConfirming(true)}>
          Rotate API key…
        </button>
      )}
      <FormErrors form={action} />
    </div>
  );
}

function ConfirmRotation({ onConfirm, onCancel }: { onConfirm(): void; onCancel(): void }) {
  const box = useDialogFocus<HTMLDivElement>(onCancel);
  return (
    <div class="row" role="dialog" aria-label="Confirm key rotation" ref={box}>
      <span>The current key stops working at once, for this dashboard and anything else using it.</span>
      <button type="button" class="secondary" onClick={onCancel}>
        Cancel
      </button>
      <button type="button" class="danger" onClick={onConfirm}>
        Rotate API key
      </button>
    </div>
  );
}
