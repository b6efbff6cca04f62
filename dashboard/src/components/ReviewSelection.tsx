import { siblingTemplate, type UndocumentedEndpointResponse } from '@spectator/shared';
import { useState, type FormEvent } from 'react';
import { useAction } from '../hooks/action';
import { useApp } from '../hooks/app';
import { useDrafts } from '../hooks/drafts';
import { formatCount, plural } from '../lib/format';
import { navigate } from '../lib/routes';
import { FormError } from './forms';
import { NeedsScope } from './Permission';

/** The key of an endpoint in a selection. */
export const selectionKey = (endpoint: { method: string; path: string }): string =>
  `${endpoint.method} ${endpoint.path}`;

/**
 * Review at the scale of a real API: what to do with the undocumented endpoints selected in a
 * capture's review. Select every endpoint the filter shows, document them all in one commit (they
 * become finished drafts with their bodies, then Commit changes), or merge literal siblings
 * (`/images/alice-cli`, `/images/bob-web`) into one template the user can rename, which the backend
 * keeps as a path hint and regroups the stored traffic into at once.
 */
export function SelectionBar({
  captureId,
  shown,
  selected,
  onSelect,
}: {
  captureId: string;
  /** The endpoints the filter shows. */
  shown: readonly UndocumentedEndpointResponse[];
  selected: ReadonlySet<string>;
  onSelect: (next: ReadonlySet<string>) => void;
}) {
  const { project } = useApp();
  const drafts = useDrafts();
  const [merging, setMerging] = useState(false);
  const [merged, setMerged] = useState<string | null>(null);
  const chosen = shown.filter((endpoint) => selected.has(selectionKey(endpoint)));
  const template = siblingTemplate([...new Set(chosen.map((endpoint) => endpoint.path))]);
  const allShown = shown.length > 0 && chosen.length === shown.length;

  const documentSelected = () => {
    drafts.finishMany(
      captureId,
      chosen.map(({ method, path }) => ({ method, path, description: '', documentBodies: true })),
    );
    onSelect(new Set());
    navigate({ page: 'commit', project, captureId });
  };

  return (
    <div className="selection-bar" role="group" aria-label="Selected endpoints">
      <label className="checkbox">
        <input
          type="checkbox"
          checked={allShown}
          onChange={() =>
            onSelect(
              allShown
                ? new Set([...selected].filter((key) => !shown.some((e) => selectionKey(e) === key)))
                : new Set([...selected, ...shown.map(selectionKey)]),
            )
          }
        />
        Select all shown ({formatCount(shown.length)})
      </label>
      <span className="muted" aria-live="polite">
        {plural(chosen.length, 'endpoint')} selected
      </span>
      <button type="button" className="primary" disabled={chosen.length === 0} onClick={documentSelected}>
        Document selected
      </button>
      <NeedsScope scope="write" action="Merging endpoints into a template">
        <button
          type="button"
          disabled={template === undefined}
          onClick={() => setMerging(true)}
          title={template === undefined ? 'Select two or more paths with the same number of segments' : undefined}
        >
          Merge into one template…
        </button>
      </NeedsScope>
      {chosen.length > 0 && (
        <button type="button" className="link" onClick={() => onSelect(new Set())}>
          Clear selection
        </button>
      )}
      {merging && template !== undefined && (
        <TemplateForm
          proposed={template}
          what={`Merge ${plural(new Set(chosen.map((e) => e.path)).size, 'path')} into one template`}
          action="Merge"
          onCancel={() => setMerging(false)}
          onDone={(made, rows) => {
            setMerging(false);
            onSelect(new Set());
            setMerged(`Merged into ${made} (${plural(rows, 'stored row')} regrouped).`);
          }}
        />
      )}
      {merged && (
        <p role="status" className="success-note">
          {merged}
        </p>
      )}
    </div>
  );
}

/**
 * A template to state, prefilled and editable (parameter names are the user's to choose), sent
 * as a path hint: the backend merges what it stored under the template's literal paths into it.
 */
export function TemplateForm({
  proposed,
  what,
  action,
  onCancel,
  onDone,
}: {
  proposed: string;
  what: string;
  action: string;
  onCancel: () => void;
  onDone: (template: string, regrouped: number) => void;
}) {
  const { api, project } = useApp();
  const [template, setTemplate] = useState(proposed);
  const { busy, error, run } = useAction();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const result = await run(() => api.addPathHint(project, template.trim()));
    if (result) onDone(result.template, result.regrouped);
  };
  return (
    <form className="card template-form" onSubmit={submit} aria-label={what}>
      <label>
        {what}
        <input
          value={template}
          onChange={(e) => setTemplate(e.target.value)}
          spellCheck={false}
          aria-describedby="template-help"
        />
      </label>
      <p id="template-help" className="muted">
        Each <code>{'{name}'}</code> segment is a parameter; rename it as you like. Documented templates always win over
        this one.
      </p>
      <FormError error={error} />
      <div className="row">
        <button type="submit" className="primary" disabled={busy}>
          {busy ? `${action}…` : action}
        </button>
        <button type="button" className="link" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
