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
} from '@spectator/shared';
import type { Principal } from '../auth/tokens.service';
import { SUNSET_PAST_MARK } from '../captures/batch-statement';
import { ShapeStore } from '../captures/shape-store';
import type { ProjectEntity } from '../projects/project.entity';
import { type DeprecationRow, UsageRepository } from './usage.repository';

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
  ) {}

  async usage(project: ProjectEntity, kind: MatrixKind): Promise<UsageResponse> {
    const [exchanges, headers, documented, marks] = await Promise.all([
      this.repository.exchanges(project.id, kind),
      this.repository.responseHeaders(project.id, kind),
      this.repository.documented(project.id),
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
    for (const d of documented) entry(d.method, d.path);
    const byDoc = new Map(documented.map((d) => [keyOf(d.method, d.path), d]));
    const marked = new Set(marks.map((m) => `${keyOf(m.method, m.path)}\u0000${m.location}\u0000${m.name}`));
    const isMarked = (u: Accumulated, location: DeprecationLocation, name: string): boolean =>
      marked.has(`${keyOf(u.method, u.path)}\u0000${location}\u0000${name}`);
    const endpoints = [...byKey.values()]
      .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.method < b.method ? -1 : 1))
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
    return { environment: kind, endpoints };
  }

  /**
   * Orphans: documented endpoints no production traffic reached in the last `days` days (or
   * never). Zombies: what is marked deprecated, or answered with a `Deprecation` or `Sunset`
   * header, and still called there in that window.
   */
  async orphans(project: ProjectEntity, kind: MatrixKind, days: number, now = new Date()): Promise<OrphansResponse> {
    const since = new Date(now.getTime() - days * DAY_MS);
    const usage = await this.usage(project, kind);
    const recent = (at: string | null): boolean => at !== null && Date.parse(at) >= since.getTime();
    const orphans = usage.endpoints
      .filter((e) => e.endpointId !== null && !recent(e.lastSeen))
      .map((e) => ({
        endpointId: e.endpointId as string,
        method: e.method,
        path: e.path,
        version: e.version as string,
        lastSeen: e.lastSeen,
        deprecated: e.deprecated,
      }));
    const zombies: OrphansResponse['zombies'] = [];
    for (const e of usage.endpoints) {
      if (!recent(e.lastSeen)) continue;
      const signalled = e.deprecationHeaders.deprecation !== null || e.deprecationHeaders.sunset !== null;
      if (e.deprecated || signalled)
        zombies.push({
          method: e.method,
          path: e.path,
          location: 'endpoint',
          name: '',
          lastSeen: e.lastSeen as string,
          why: e.deprecated
            ? 'marked deprecated'
            : recent(e.deprecationHeaders.sunsetPast)
              ? 'answered past its Sunset date'
              : 'answered with a Deprecation or Sunset header',
        });
      const parts: Array<[DeprecationLocation, NameLastSeen[]]> = [
        ['query', e.query],
        ['header', e.requestHeaders],
        ['request', e.requestFields],
        ['response', e.responseFields],
      ];
      for (const [location, names] of parts)
        for (const n of names)
          if (n.deprecated && recent(n.lastSeen))
            zombies.push({
              method: e.method,
              path: e.path,
              location,
              name: n.name,
              lastSeen: n.lastSeen,
              why: 'marked deprecated',
            });
    }
    return { environment: kind, days, since: since.toISOString(), orphans, zombies };
  }

  /**
   * Documented endpoints production traffic did not reach in the last `days` days, each with the
   * evidence: when production and staging last saw it, whether it is deprecated. Nothing is safe
   * when production sent no traffic at all in the window (no agent, no evidence: not "unused").
   * With some, a removal proposal is drafted from the list.
   */
  async safeToRemove(project: ProjectEntity, days: number, now = new Date()): Promise<SafeToRemoveResponse> {
    const [production, staging, productionLastSeen] = await Promise.all([
      this.orphans(project, 'production', days, now),
      this.usage(project, 'staging'),
      this.repository.lastSeenAny(project.id, 'production'),
    ]);
    const since = production.since;
    const watching = productionLastSeen !== null && productionLastSeen.getTime() >= Date.parse(since);
    const stagingSeen = new Map(staging.endpoints.map((e) => [keyOf(e.method, e.path), e.lastSeen]));
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
