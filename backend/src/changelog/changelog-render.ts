import type { ChangelogEntry, ChangelogResponse, ChangeResponse } from '@spectator/shared';
import { Feed } from 'feed';

/** One change as a line of text: where, what, and whether it breaks clients. */
export function changeLine(change: ChangeResponse): string {
  if (change.change === 'endpoint removed') return `${change.breaking ? '**breaking** ' : ''}endpoint removed`;
  const where =
    change.in === 'query'
      ? `query parameter \`${change.at}\``
      : change.in === 'header'
        ? `request header \`${change.at}\``
        : `${change.in}${change.status === undefined ? '' : ` ${change.status}`} \`${change.at}\``;
  return `${change.breaking ? '**breaking** ' : ''}${where} ${change.change}`;
}

/** Where a version runs now, in words: `production (build p-3)`, `CI (PR #12)`. */
export function runsInText(entry: ChangelogEntry): string {
  if (entry.runsIn.length === 0) return 'not seen running anywhere yet';
  return entry.runsIn
    .map((where) =>
      where.kind === 'ci'
        ? `CI (${where.name})`
        : `${where.kind}${where.build === null ? '' : ` (build ${where.build})`}`,
    )
    .join(', ');
}

function entryTitle(entry: ChangelogEntry): string {
  return `${entry.method} ${entry.path} ${entry.version}${entry.breaking ? ' (breaking)' : ''}`;
}

/** Markdown text is written as is except for the characters that would start markup. */
function escapeMarkdown(text: string): string {
  return text.replace(/([\\`*_[\]<>#|])/g, '\\$1');
}

function proposalText(entry: ChangelogEntry): string {
  const proposal = entry.proposal;
  if (proposal === null) return 'No proposal is recorded for it.';
  const approved =
    proposal.approvedBy === null
      ? ''
      : ` approved by ${escapeMarkdown(proposal.approvedBy)}${proposal.approvedAt === null ? '' : ` at ${proposal.approvedAt}`}`;
  return `Proposal “${escapeMarkdown(proposal.title)}”${approved}.`;
}

/** The changelog as Markdown: a section per day (UTC), an entry per version, newest first. */
export function changelogMarkdown(changelog: ChangelogResponse): string {
  const lines = [`# Changelog of ${escapeMarkdown(changelog.projectName)}`, ''];
  if (changelog.entries.length === 0) lines.push('Nothing is documented yet.', '');
  let day = '';
  for (const entry of changelog.entries) {
    const date = entry.createdAt.slice(0, 10);
    if (date !== day) {
      day = date;
      lines.push(`## ${date}`, '');
    }
    lines.push(`### \`${entry.method} ${entry.path}\` ${entry.version}${entry.breaking ? ' — breaking' : ''}`, '');
    lines.push(
      `${entry.previous === null ? 'First documented.' : `From ${entry.previous}.`} ${proposalText(entry)} Runs in: ${runsInText(entry)}.`,
      '',
    );
    for (const change of entry.changes) lines.push(`- ${changeLine(change)}`);
    if (entry.changes.length > 0) lines.push('');
  }
  return `${lines.join('\n').trimEnd()}\n`;
}

/**
 * The changelog as an Atom 1.0 feed (RFC 4287), written by the `feed` library: an entry per
 * version, its id the version's (`urn:uuid:`), its link the endpoint's documentation in the dashboard.
 */
export function changelogAtom(changelog: ChangelogResponse, dashboard: string): string {
  const base = dashboard.replace(/\/+$/, '');
  const project = encodeURIComponent(changelog.project);
  const newest = changelog.entries[0];
  const feed = new Feed({
    title: `${changelog.projectName}: API changelog`,
    id: `${base}/#/p/${project}/docs`,
    link: `${base}/#/p/${project}/docs`,
    updated: new Date(newest?.createdAt ?? 0),
    generator: 'Spectator',
    copyright: '',
  });
  for (const entry of changelog.entries) {
    const changes = entry.changes.map((change) => `<li>${escapeHtml(changeLine(change))}</li>`).join('');
    feed.addItem({
      title: entryTitle(entry),
      id: `urn:uuid:${entry.versionId}`,
      link: `${base}/#/p/${project}/docs/${encodeURIComponent(entry.endpointId)}`,
      date: new Date(entry.createdAt),
      description: `${proposalText(entry)} Runs in: ${runsInText(entry)}.`,
      content: `<p>${escapeHtml(proposalText(entry))} Runs in: ${escapeHtml(runsInText(entry))}.</p>${changes === '' ? '' : `<ul>${changes}</ul>`}`,
      category: entry.breaking ? [{ term: 'breaking', name: 'Breaking change' }] : [],
    });
  }
  return feed.atom1();
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
