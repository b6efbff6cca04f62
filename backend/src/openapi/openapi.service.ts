import { Injectable } from '@nestjs/common';
import {
  type EndpointShapes,
  formatVersion,
  isStreamMediaType,
  type JsonSchema,
  type OpenApiImportResponse,
  parseVersion,
} from '@spectator/shared';
import type { Principal } from '../common/principal';
import { badInput } from '../common/errors';
import { EndpointsService, toEndpointDocs } from '../endpoints/endpoints.service';
import { MatrixService } from '../evidence/matrix.service';
import type { ProjectEntity } from '../projects/project.entity';
import { ProposalsService } from '../proposals/proposals.service';
import type { OpenApiQuery } from './dto/openapi.dto';
import { documentOf, importOpenApi } from './openapi-import';
import { UsageService } from '../usage/usage.service';

/** One endpoint at one version, as exported. */
export interface ExportedEndpoint extends EndpointShapes {
  method: string;
  path: string;
  description: string;
  major: number;
  minor: number;
}

type OpenApiDocument = Record<string, unknown> & { paths: Record<string, Record<string, unknown>> };

const REASONS: Record<string, string> = {
  '2': 'Success',
  '3': 'Redirection',
  '4': 'Client error',
  '5': 'Server error',
};

/** `{postId}` segments of a path template, in order. */
function pathParameters(path: string): string[] {
  return [...path.matchAll(/\{([^{}/]+)\}/g)].map((match) => match[1] as string);
}

/**
 * The media type map of one body: a documented shape as its JSON Schema, an unshaped body as `{}`.
 * A stream (server-sent events, JSON lines) is shaped as the array of its items and documented by
 * the schema of one item, as OpenAPI 3.1 descriptions of such streams do (3.2 calls it `itemSchema`).
 */
function content(contentType: string, schema: JsonSchema | null): Record<string, unknown> {
  if (schema === null) return { [contentType]: {} };
  return {
    [contentType]: { schema: isStreamMediaType(contentType) && schema.items !== undefined ? schema.items : schema },
  };
}

/**
 * An OpenAPI 3.1 document of some endpoint versions. Shapes are JSON Schema 2020-12 (the dialect
 * OpenAPI 3.1 uses); each operation carries its per-endpoint version as `x-spectator-version`,
 * its path parameters, and its documented query parameters and request headers.
 */
export function toOpenApi(title: string, description: string, endpoints: readonly ExportedEndpoint[]): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {};
  for (const endpoint of endpoints) {
    const docs = toEndpointDocs(endpoint);
    const responses: Record<string, unknown> = {};
    for (const response of docs.responses) {
      responses[String(response.status)] = {
        description: REASONS[String(response.status)[0] as string] ?? 'Response',
        ...(response.contentType === '' ? {} : { content: content(response.contentType, response.shape) }),
      };
    }
    // Names only: values are never recorded, so every parameter is documented as a string.
    const parameters = [
      ...pathParameters(endpoint.path).map((name) => ({
        name,
        in: 'path',
        required: true,
        schema: { type: 'string' },
      })),
      ...(docs.parameters?.query ?? []).map(({ name, required }) => ({
        name,
        in: 'query',
        required,
        schema: { type: 'string' },
      })),
      ...(docs.parameters?.headers ?? []).map(({ name, required }) => ({
        name,
        in: 'header',
        required,
        schema: { type: 'string' },
      })),
    ];
    const operation: Record<string, unknown> = {
      ...(endpoint.description === ''
        ? {}
        : { summary: endpoint.description.split('\n')[0]?.slice(0, 200), description: endpoint.description }),
      ...(parameters.length === 0 ? {} : { parameters }),
      ...(docs.request === null
        ? {}
        : { requestBody: { required: true, content: content(docs.request.contentType, docs.request.shape) } }),
      responses: Object.keys(responses).length === 0 ? { default: { description: 'Not documented' } } : responses,
      'x-spectator-version': formatVersion(endpoint),
    };
    (paths[endpoint.path] ??= {})[endpoint.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: { title, version: '1', description },
    paths,
  };
}

/**
 * The OpenAPI export of a project's documented endpoints (read from endpoints and evidence), and
 * imports of a document as a proposal (made through proposals). It holds no SQL of its own.
 */
@Injectable()
export class OpenApiService {
  constructor(
    private readonly endpoints: EndpointsService,
    private readonly matrix: MatrixService,
    private readonly proposals: ProposalsService,
    private readonly usage: UsageService,
  ) {}

  /**
   * Imports an OpenAPI document (`body`: parsed JSON, or YAML text) as a proposal of planned
   * shapes, approved at once when `approve` is true (by an approver; refused under four eyes).
   * @throws DomainError BadInput for a document it cannot import, Forbidden to approve.
   */
  async import(
    project: ProjectEntity,
    principal: Principal,
    body: unknown,
    approve: boolean,
  ): Promise<OpenApiImportResponse> {
    // Before anything is made: approving at once needs the approver role, and no four eyes.
    if (approve) await this.proposals.ensureMayApproveOwn(project, principal);
    const { warnings, deprecated, ...proposal } = importOpenApi(documentOf(body));
    const created = await this.proposals.create(project, principal, proposal);
    // `deprecated` is kept as marks (usage: zombies), whether or not the proposal is approved.
    for (const mark of deprecated) await this.usage.mark(project, principal, mark, 'openapi');
    return {
      proposal: approve ? await this.proposals.approve(project, principal, created.id) : created,
      warnings,
    };
  }

  async document(project: ProjectEntity, query: OpenApiQuery): Promise<OpenApiDocument> {
    if (query.version !== undefined && query.environment !== undefined)
      throw badInput('give version or environment, not both');
    if (query.pullRequest !== undefined && query.environment !== 'ci')
      throw badInput('pullRequest is only for environment=ci');
    let endpoints: ExportedEndpoint[];
    let description: string;
    if (query.version !== undefined) {
      description = `Endpoints at version ${query.version}.`;
      endpoints = await this.endpoints.atVersions(project.id, { version: parseVersion(query.version) });
    } else if (query.environment !== undefined) {
      description = `The versions running in ${query.environment}${query.pullRequest === undefined ? '' : ` (pull request ${query.pullRequest})`} now.`;
      const running = await this.matrix.currentVersions(project, query.environment, query.pullRequest);
      endpoints = await this.endpoints.atVersions(project.id, {
        versionIds: running.flatMap((row) => (row.versionId === null ? [] : [row.versionId])),
      });
    } else {
      description = 'The current documented versions.';
      endpoints = await this.endpoints.atVersions(project.id, 'current');
    }
    return toOpenApi(project.name, `${description} Generated by Spectator from observed traffic.`, endpoints);
  }
}
