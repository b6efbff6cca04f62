import type { ProjectResponse } from '@spectator/shared';
import { useMemo, useState, type FormEvent } from 'react';
import { createApiClient } from '../api/client';
import { useAction } from '../hooks/action';
import { slugFor } from '../lib/format';
import { FormError } from './forms';

/**
 * Creating a project, offered on the sign-in page to the bootstrap admin token (the one token not
 * bound to a project, and the only one the backend lets create projects). The slug follows the
 * name until it is edited.
 */
export function NewProject({ token, onCreated }: { token: string; onCreated: (project: ProjectResponse) => void }) {
  const api = useMemo(() => createApiClient({ token }), [token]);
  const [name, setName] = useState('');
  const [editedSlug, setEditedSlug] = useState<string | null>(null);
  const slug = editedSlug ?? slugFor(name);
  const { busy, error, run } = useAction();

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const created = await run(() => api.createProject({ slug: slug.trim(), name: name.trim() }));
    if (created) onCreated(created);
  };

  return (
    <form className="card signin-card" onSubmit={submit} aria-busy={busy} aria-labelledby="new-project-title">
      <h2 id="new-project-title">Create a project</h2>
      <p className="muted">
        One project per API. You are signed in to it once it is made; then create its tokens in Settings.
      </p>
      <label>
        Name
        <input
          value={name}
          onChange={(e) => setName(e.target.value)}
          required
          maxLength={200}
          placeholder="e.g. Posts API"
        />
      </label>
      <label>
        Slug <span className="muted">(a-z, 0-9 and -, in the dashboard&apos;s links)</span>
        <input
          value={slug}
          onChange={(e) => setEditedSlug(e.target.value)}
          required
          maxLength={63}
          pattern="[a-z0-9][a-z0-9\-]*"
          placeholder="e.g. posts-api"
        />
      </label>
      <FormError error={error} />
      <button type="submit" className="primary" disabled={busy}>
        {busy ? 'Creating…' : 'Create project'}
      </button>
    </form>
  );
}
