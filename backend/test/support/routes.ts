import { RequestMethod, type Type } from '@nestjs/common';
import { METHOD_METADATA, MODULE_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { AppModule } from '../../src/app.module';
import { ACCESS_KEY, type RouteAccess } from '../../src/common/access';

/** One HTTP route of the service as Nest registers it (under /api/v1), with the access it declares. */
export interface NestRoute {
  method: string;
  /** Under /api/v1, with Nest's `:name` parameters, e.g. `/projects/:p/proposals/:id/approve`. */
  path: string;
  /** What `@RequireScope` says on the handler or its controller; undefined when neither says (the guard refuses). */
  access: RouteAccess | undefined;
  handler: string;
}

type ModuleRef = Type<unknown> | { module: Type<unknown>; imports?: ModuleRef[]; controllers?: Type<unknown>[] };

function join(...parts: string[]): string {
  return `/${parts
    .flatMap((part) => part.split('/'))
    .filter(Boolean)
    .join('/')}`;
}

/**
 * Every HTTP route of the service, read from the modules AppModule imports and their controllers'
 * decorators (what Nest itself reads to register them), not from the OpenAPI document: a route
 * left out of the document, or added later, is listed all the same.
 */
export function nestRoutes(): NestRoute[] {
  const root = AppModule.forRuntime({ databaseUrl: '' } as never, {} as never);
  const seen = new Set<unknown>();
  const controllers = new Set<Type<unknown>>();
  const visit = (ref: ModuleRef | undefined): void => {
    if (ref === undefined || seen.has(ref)) return;
    seen.add(ref);
    const type = typeof ref === 'function' ? ref : ref.module;
    const dynamic: { imports?: ModuleRef[]; controllers?: Type<unknown>[] } = typeof ref === 'function' ? {} : ref;
    for (const controller of [
      ...((Reflect.getMetadata(MODULE_METADATA.CONTROLLERS, type) as Type<unknown>[] | undefined) ?? []),
      ...(dynamic.controllers ?? []),
    ])
      controllers.add(controller);
    for (const imported of [
      ...((Reflect.getMetadata(MODULE_METADATA.IMPORTS, type) as ModuleRef[] | undefined) ?? []),
      ...(dynamic.imports ?? []),
    ])
      visit(imported);
  };
  visit(root as ModuleRef);
  const routes: NestRoute[] = [];
  for (const controller of controllers) {
    const base = (Reflect.getMetadata(PATH_METADATA, controller) as string | undefined) ?? '';
    const classAccess = Reflect.getMetadata(ACCESS_KEY, controller) as RouteAccess | undefined;
    const prototype = controller.prototype as Record<string, unknown>;
    for (const name of Object.getOwnPropertyNames(prototype)) {
      const handler = prototype[name];
      if (name === 'constructor' || typeof handler !== 'function') continue;
      const path = Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined;
      const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
      if (path === undefined || method === undefined) continue;
      for (const each of Array.isArray(path) ? path : [path])
        routes.push({
          method: RequestMethod[method],
          path: join(base, each),
          access: (Reflect.getMetadata(ACCESS_KEY, handler) as RouteAccess | undefined) ?? classAccess,
          handler: `${controller.name}.${name}`,
        });
    }
  }
  return routes.sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method));
}
