import { Injectable } from '@nestjs/common';
import {
  type DeprecationLocation,
  type DeprecationRequest,
  type DeprecationResponse,
  type EndpointUsage,
  fieldPaths,
  type MatrixKind,
  type NameLastSeen,
  type OrphansResponse,
  type SafeToRemoveEndpoint,
  type SafeToRemoveResponse,
  type UsageResponse,
  type ZombieUse,
} from '@spectator/shared';
import type { Principal } from '../auth/tokens.service';
import { SUNSET_PAST_MARK } from '../captures/batch-statement';
import { ShapeStore } from '../captures/shape-store';
import type { ProjectEntity } from '../projects/project.entity';
import { VersionStore } from '../versions/version-store';
import { DomainError, ErrorCode } from '../common/errors';
import { environmentRowOf } from '../evidence/environment-row';
import { type DeprecationRow, type EndpointKey, type RowScope, UsageRepository } from './usage.repository';

const DAY_MS = 24 * 60 * 60 * 1000;

/** Name → latest sighting, kept as the latest of all. */
class LastSeenMap {
  private readonly map = new Map<string, number>();
  add(name: string, at: Date): void {
    const before = this.map.get(name);
    if (before === undefined || at.getTime() > before) this.map.set(name, at.getTime());
  }
  get(name: string): number | undefined {
    return this.map.get(name);
  }
  list(deprecated: (name: string) => boolean): NameLastSeen[] {
    return [...this.map.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, at]) => ({ name, lastSeen: new Date(at).toISOString(), deprecated: deprecated(name) }));
  }
}

interface Accumulated {
  method: string;
  path: string;
  lastSeen: number;
  statuses: LastSeenMap;
  query: LastSeenMap;
  requestHeaders: LastSeenMap;
  responseHeaders: LastSeenMap;
  requestFields: LastSeenMap;
  responseFields: LastSeenMap;
}

function keyOf(method: string, path: string): string {
  return `${method} ${path}`;
}

/** The response header names zombies are found by (`SUNSET_PAST_MARK`: a Sunset date already past). */
const SIGNAL_NAMES = ['deprecation', 'sunset', SUNSET_PAST_MARK];

const ZOMBIE_LOCATIONS: readonly DeprecationLocation[] = ['endpoint', 'query', 'header', 'request', 'response'];

/** Zombies by path, method, then the endpoint before its parameters, headers and fields, each by name. */
function byZombieOrder(a: ZombieUse, b: ZombieUse): number {
  const order = (x: string, y: string): number => (x < y ? -1 : x > y ? 1 : 0);
  return (
    order(a.path, b.path) ||
    order(a.method, b.method) ||
    ZOMBIE_LOCATIONS.indexOf(a.location) - ZOMBIE_LOCATIONS.indexOf(b.location) ||
    order(a.name, b.name)
  );
}

/**
 * Usage from stored evidence: when each endpoint, status, body field, query parameter and header
 * name was last seen in an environment; what is documented and unused there (orphans), what is
 * deprecated and still called (zombies), and what is safe to remove, with the evidence.
 */
@Injectable()
export class UsageService {
  constructor(
    private readonly repository: UsageRepository,
    private readonly shapes: ShapeStore,
    private readonly versions: VersionStore,
  ) {}

  /**
   * When each endpoint (documented, or seen in the kind's evidence), status, field, query
   * parameter and header was last seen there, by path then method (byte order): the endpoints
   * after `page.after` (excluded), at most `page.limit` of them, or all without either.
   */
  async usage(
    project: ProjectEntity,
    kind: MatrixKind,
    page: { after?: EndpointKey; limit?: number; build?: string } = {},
  ): Promise<UsageResponse> {
    const scope = await this.scopeOf(project, kind, page.build);
    const paged = page.after !== undefined || page.limit !== undefined;
    const keys = await this.repository.keys(project.id, scope, page.after, page.limit);
    return { environment: kind, build: scope.name, endpoints: await this.endpointUsage(project, scope, keys, paged) };
  }

  /**
   * Whose evidence a question reads: the kind's, or one build's (its row's name).
   * @throws DomainError BuildNotFound when the kind has no such row.
   */
  private async scopeOf(project: ProjectEntity, kind: MatrixKind, build: string | undefined): Promise<RowScope> {
    const scope = { kind, name: build ?? null };
    if (build !== undefined && !(await this.repository.hasRow(project.id, scope)))
      throw new DomainError(
        ErrorCode.BuildNotFound,
        `environment ${kind} has no build ${build} in project ${project.slug}`,
      );
    return scope;
  }

  /** The response headers' captures of a scope: every capture of the kind (null), or those whose row is the build's. */
  private async capturesOf(project: ProjectEntity, scope: RowScope): Promise<string[] | null> {
    if (scope.name === null) return null;
    const captures = await this.repository.capturesOf(project.id, scope.kind);
    return captures
      .filter(
        (c) =>
          environmentRowOf({
            kind: scope.kind,
            ...(c.pullRequest === null ? {} : { pullRequest: c.pullRequest }),
            ...(c.build === null ? {} : { build: c.build }),
            ...(c.commit === null ? {} : { commit: c.commit }),
          })?.name === scope.name,
      )
      .map((c) => c.id);
  }

  /**
   * The usage of the endpoints `keys`, in that order. `only`: the reads are of those endpoints
   * alone (a page, a few endpoints), else of every endpoint of the kind (which `keys` then lists).
   */
  private async endpointUsage(
    project: ProjectEntity,
    scope: RowScope,
    keys: readonly EndpointKey[],
    only: boolean,
  ): Promise<EndpointUsage[]> {
    if (keys.length === 0) return [];
    const some = only ? keys : undefined;
    const captures = await this.capturesOf(project, scope);
    const [exchanges, headers, documented, marks] = await Promise.all([
      this.repository.exchanges(project.id, scope, some),
      this.repository.responseHeaders(project.id, { kind: scope.kind, captures }, some),
      this.versions.documentedCurrent(project.id, some),
      this.repository.deprecations(project.id),
    ]);
    const shapes = await this.shapes.load([
      ...new Set(exchanges.flatMap((e) => [e.requestShape, e.responseShape]).filter((fp): fp is string => fp !== null)),
    ]);
    const fields = new Map<string, string[]>();
    const fieldsOf = (fp: string | null): string[] => {
      if (fp === null) return [];
      let paths = fields.get(fp);
      if (paths === undefined) {
        const shape = shapes.get(fp);
        paths = shape === undefined ? [] : fieldPaths(shape);
        fields.set(fp, paths);
      }
      return paths;
    };
    const byKey = new Map<string, Accumulated>();
    const entry = (method: string, path: string): Accumulated => {
      const key = keyOf(method, path);
      let found = byKey.get(key);
      if (found === undefined) {
        found = {
          method,
          path,
          lastSeen: 0,
          statuses: new LastSeenMap(),
          query: new LastSeenMap(),
          requestHeaders: new LastSeenMap(),
          responseHeaders: new LastSeenMap(),
          requestFields: new LastSeenMap(),
          responseFields: new LastSeenMap(),
        };
        byKey.set(key, found);
      }
      return found;
    };
    for (const e of exchanges) {
      const usage = entry(e.method, e.path);
      usage.lastSeen = Math.max(usage.lastSeen, e.lastSeen.getTime());
      usage.statuses.add(String(e.status), e.lastSeen);
      for (const name of e.query ?? []) usage.query.add(name, e.lastSeen);
      for (const name of e.requestHeaders ?? []) usage.requestHeaders.add(name, e.lastSeen);
      for (const path of fieldsOf(e.requestShape)) usage.requestFields.add(path, e.lastSeen);
      for (const path of fieldsOf(e.responseShape)) usage.responseFields.add(path, e.lastSeen);
    }
    for (const h of headers) {
      // Only endpoints the evidence knows (a capture's literal path may since be regrouped).
      const usage = byKey.get(keyOf(h.method, h.path));
      if (usage !== undefined) usage.responseHeaders.add(h.name, h.lastSeen);
    }
    const byDoc = new Map(documented.map((d) => [keyOf(d.method, d.path), d]));
    const marked = new Set(marks.map((m) => `${keyOf(m.method, m.path)}\u0000${m.location}\u0000${m.name}`));
    const isMarked = (u: Accumulated, location: DeprecationLocation, name: string): boolean =>
      marked.has(`${keyOf(u.method, u.path)}\u0000${location}\u0000${name}`);
    return keys
      .map((k) => entry(k.method, k.path))
      .map((u): EndpointUsage => {
        const doc = byDoc.get(keyOf(u.method, u.path));
        const deprecation = u.responseHeaders.get('deprecation');
        const sunset = u.responseHeaders.get('sunset');
        const sunsetPast = u.responseHeaders.get(SUNSET_PAST_MARK);
        return {
          method: u.method,
          path: u.path,
          endpointId: doc?.endpointId ?? null,
          version: doc?.version ?? null,
          deprecated: isMarked(u, 'endpoint', ''),
          deprecationHeaders: {
            deprecation: deprecation === undefined ? null : new Date(deprecation).toISOString(),
            sunset: sunset === undefined ? null : new Date(sunset).toISOString(),
            sunsetPast: sunsetPast === undefined ? null : new Date(sunsetPast).toISOString(),
          },
          lastSeen: u.lastSeen === 0 ? null : new Date(u.lastSeen).toISOString(),
          statuses: u.statuses.list(() => false).map((s) => ({ status: Number(s.name), lastSeen: s.lastSeen })),
          query: u.query.list((name) => isMarked(u, 'query', name)),
          requestHeaders: u.requestHeaders.list((name) => isMarked(u, 'header', name)),
          responseHeaders: u.responseHeaders.list(() => false).filter((h) => h.name !== SUNSET_PAST_MARK),
          requestFields: u.requestFields.list((name) => isMarked(u, 'request', name)),
          responseFields: u.responseFields.list((name) => isMarked(u, 'response', name)),
        };
      });
  }

  /**
   * Orphans: documented endpoints no traffic of the kind reached in the last `days` days (or
   * never). Zombies: what is marked deprecated, or answered with a `Deprecation` or `Sunset`
   * header, and still called there in that window. Read from one aggregate of the evidence (last
   * seen per endpoint) and the header names; fields and parameters only of the endpoints that have
   * a part marked, so the cost does not grow with every shape the project has seen.
   */
  async orphans(
    project: ProjectEntity,
    where: { kind: MatrixKind; build?: string },
    days: number,
    now = new Date(),
  ): Promise<OrphansResponse> {
    const { kind } = where;
    const scope = await this.scopeOf(project, kind, where.build);
    const since = new Date(now.getTime() - days * DAY_MS);
    const captures = await this.capturesOf(project, scope);
    const [documented, seen, marks, signals] = await Promise.all([
      this.versions.documentedCurrent(project.id),
      this.repository.lastSeen(project.id, scope),
      this.repository.deprecations(project.id),
      this.repository.responseHeaders(project.id, { kind, captures }, undefined, SIGNAL_NAMES),
    ]);
    const lastSeen = new Map(seen.map((e) => [keyOf(e.method, e.path), e.lastSeen.getTime()]));
    const recent = (at: number | undefined): at is number => at !== undefined && at >= since.getTime();
    const iso = (at: number | undefined): string | null => (at === undefined ? null : new Date(at).toISOString());
    const endpointMarked = new Set(marks.filter((m) => m.location === 'endpoint').map((m) => keyOf(m.method, m.path)));
    // A removed endpoint is no orphan: it is documented as gone.
    const orphans = documented
      .filter((d) => !d.removed && !recent(lastSeen.get(keyOf(d.method, d.path))))
      .map((d) => ({
        endpointId: d.endpointId,
        method: d.method,
        path: d.path,
        version: d.version,
        lastSeen: iso(lastSeen.get(keyOf(d.method, d.path))),
        deprecated: endpointMarked.has(keyOf(d.method, d.path)),
      }));
    // Endpoints the API answered with a Deprecation or Sunset header, and when last past its Sunset date.
    const signalled = new Map<string, number>();
    for (const h of signals) {
      const key = keyOf(h.method, h.path);
      const past = h.name === SUNSET_PAST_MARK ? h.lastSeen.getTime() : 0;
      signalled.set(key, Math.max(signalled.get(key) ?? 0, past));
    }
    const zombies: OrphansResponse['zombies'] = [];
    for (const e of seen) {
      const key = keyOf(e.method, e.path);
      const at = lastSeen.get(key);
      const past = signalled.get(key);
      if (!recent(at) || (!endpointMarked.has(key) && past === undefined)) continue;
      zombies.push({
        method: e.method,
        path: e.path,
        location: 'endpoint',
        name: '',
        lastSeen: iso(at) as string,
        why: endpointMarked.has(key)
          ? 'marked deprecated'
          : recent(past)
            ? 'answered past its Sunset date'
            : 'answered with a Deprecation or Sunset header',
      });
    }
    const withParts = [
      ...new Map(
        marks
          .filter((m) => m.location !== 'endpoint' && recent(lastSeen.get(keyOf(m.method, m.path))))
          .map((m) => [keyOf(m.method, m.path), { method: m.method, path: m.path }]),
      ).values(),
    ];
    for (const e of await this.endpointUsage(project, scope, withParts, true)) {
      const parts: Array<[DeprecationLocation, NameLastSeen[]]> = [
        ['query', e.query],
        ['header', e.requestHeaders],
        ['request', e.requestFields],
        ['response', e.responseFields],
      ];
      for (const [location, names] of parts)
        for (const n of names)
          if (n.deprecated && recent(Date.parse(n.lastSeen)))
            zombies.push({
              method: e.method,
              path: e.path,
              location,
              name: n.name,
              lastSeen: n.lastSeen,
              why: 'marked deprecated',
            });
    }
    zombies.sort(byZombieOrder);
    return { environment: kind, build: scope.name, days, since: since.toISOString(), orphans, zombies };
  }

  /**
   * Documented endpoints production traffic did not reach in the last `days` days, each with the
   * evidence: when production and staging last saw it, whether it is deprecated. Nothing is safe
   * when production sent no traffic at all in the window (no agent, no evidence: not "unused").
   * With some, a removal proposal is drafted from the list.
   */
  async safeToRemove(project: ProjectEntity, days: number, now = new Date()): Promise<SafeToRemoveResponse> {
    const [production, staging, productionLastSeen] = await Promise.all([
      this.orphans(project, { kind: 'production' }, days, now),
      this.repository.lastSeen(project.id, { kind: 'staging', name: null }),
      this.repository.lastSeenAny(project.id, 'production'),
    ]);
    const since = production.since;
    const watching = productionLastSeen !== null && productionLastSeen.getTime() >= Date.parse(since);
    const stagingSeen = new Map(staging.map((e) => [keyOf(e.method, e.path), e.lastSeen.toISOString()]));
    const endpoints: SafeToRemoveEndpoint[] = watching
      ? production.orphans.map((orphan) => {
          const inStaging = stagingSeen.get(keyOf(orphan.method, orphan.path)) ?? null;
          return {
            ...orphan,
            evidence: [
              orphan.lastSeen === null
                ? 'never seen in production'
                : `last seen in production ${orphan.lastSeen}, before the window of ${days} days`,
              `production traffic of other endpoints seen until ${(productionLastSeen as Date).toISOString()}`,
              inStaging === null ? 'never seen in staging' : `last seen in staging ${inStaging}`,
              ...(orphan.deprecated ? ['marked deprecated'] : []),
            ],
          };
        })
      : [];
    const draft =
      endpoints.length === 0
        ? null
        : {
            title: `Remove ${endpoints.length} endpoint${endpoints.length === 1 ? '' : 's'} unused in production for ${days} days`,
            description: [
              `No production traffic reached these endpoints since ${since}, while production traffic was seen until ${(productionLastSeen as Date).toISOString()}.`,
              '',
              ...endpoints.map((e) => `- \`${e.method} ${e.path}\` ${e.version}: ${e.evidence.join('; ')}`),
            ].join('\n'),
          };
    return {
      days,
      since,
      productionLastSeen: productionLastSeen?.toISOString() ?? null,
      endpoints,
      draft,
    };
  }

  deprecations(project: ProjectEntity): Promise<DeprecationResponse[]> {
    return this.repository.deprecations(project.id).then((rows) => rows.map(toDeprecationResponse));
  }

  /** Marks part of an endpoint deprecated (idempotent). */
  async mark(
    project: ProjectEntity,
    principal: Principal | null,
    mark: DeprecationRequest,
    source: DeprecationRow['source'] = 'dashboard',
  ): Promise<void> {
    await this.repository.mark(project.id, {
      method: mark.method,
      path: mark.path,
      location: mark.location,
      name: mark.location === 'endpoint' ? '' : (mark.name ?? ''),
      source,
      createdBy: principal?.name ?? null,
    });
  }

  /** Removes a mark; removing one that is not there does nothing. */
  async unmark(project: ProjectEntity, mark: DeprecationRequest): Promise<void> {
    await this.repository.unmark(project.id, {
      method: mark.method,
      path: mark.path,
      location: mark.location,
      name: mark.location === 'endpoint' ? '' : (mark.name ?? ''),
    });
  }
}

function toDeprecationResponse(row: DeprecationRow): DeprecationResponse {
  return { ...row, createdAt: row.createdAt.toISOString() };
}
