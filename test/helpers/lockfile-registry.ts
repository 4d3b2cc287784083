// An npm registry on 127.0.0.1 serving exactly the runtime dependencies package-lock.json pins, their tarballs read from the npm cache `npm ci` filled.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';

/** One version of a package as package-lock.json records it (lockfile v3 `packages` entry). */
interface LockedPackage {
  name?: string;
  version?: string;
  resolved?: string;
  integrity?: string;
  dev?: boolean;
  optional?: boolean;
  link?: boolean;
  [field: string]: unknown;
}

/** The fields of a lockfile entry that a packument's version carries over: what npm needs to resolve and place it. */
const MANIFEST_FIELDS = ['dependencies', 'optionalDependencies', 'peerDependencies', 'peerDependenciesMeta', 'bin', 'engines', 'os', 'cpu', 'license'];

/** A package version the registry serves: its manifest fields and where its tarball is in the npm cache. */
interface Served {
  name: string;
  version: string;
  integrity: string;
  /** Installed only where it can be (a platform's binary, say). */
  optional: boolean;
  manifest: Record<string, unknown>;
  /** The tarball's file in the npm cache (content-addressed by its integrity), or undefined when the cache lacks it. */
  file: string | undefined;
}

/** The npm cache folder (`npm config get cache`). */
export function npmCacheFolder(): string {
  return execFileSync('npm', ['config', 'get', 'cache'], { encoding: 'utf8' }).trim();
}

/** The file cacache keeps a content of this integrity in (`content-v2/<algorithm>/<hex>`), when it is there. */
function cachedContent(cache: string, integrity: string): string | undefined {
  const [algorithm, digest] = integrity.split(' ')[0]?.split('-') ?? [];
  if (!algorithm || !digest) return undefined;
  const hex = Buffer.from(digest, 'base64').toString('hex');
  const file = join(cache, '_cacache', 'content-v2', algorithm, hex.slice(0, 2), hex.slice(2, 4), hex.slice(4));
  return existsSync(file) ? file : undefined;
}

/** The runtime packages a lockfile pins (dev ones left out), each with its cached tarball. */
export function lockedRuntimePackages(lockfile: string, cache: string): Served[] {
  const packages = (JSON.parse(readFileSync(lockfile, 'utf8')) as { packages: Record<string, LockedPackage> }).packages;
  const served: Served[] = [];
  for (const [path, entry] of Object.entries(packages)) {
    if (path === '' || entry.dev === true || entry.link === true || !entry.version || !entry.integrity) continue;
    const name = entry.name ?? path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    const manifest: Record<string, unknown> = {};
    for (const field of MANIFEST_FIELDS) if (entry[field] !== undefined) manifest[field] = entry[field];
    served.push({
      name,
      version: entry.version,
      integrity: entry.integrity,
      optional: entry.optional === true,
      manifest,
      file: cachedContent(cache, entry.integrity),
    });
  }
  return served;
}

/** A running registry: its URL (ending in `/`), the packages whose tarballs the cache lacks, and how to stop it. */
export interface LockfileRegistry {
  url: string;
  /** `name@version` of each served package whose tarball is not in the cache (a platform's optional binary, say). */
  uncached: string[];
  close(): Promise<void>;
}

/**
 * Starts a registry on 127.0.0.1 that answers `GET /<name>` with a packument of the versions the
 * lockfile pins and `GET /-/<name>/<version>.tgz` with the tarball from the npm cache; anything
 * else is 404. npm pointed at it with `--registry` installs a package's dependencies as a user's
 * install from the public registry would, at the lockfile's versions, without the network.
 */
export async function startLockfileRegistry(lockfile: string, cache = npmCacheFolder()): Promise<LockfileRegistry> {
  const packages = lockedRuntimePackages(lockfile, cache);
  const byName = new Map<string, Served[]>();
  for (const served of packages) byName.set(served.name, [...(byName.get(served.name) ?? []), served]);
  let base = '';
  const server: Server = createServer((request, response) => {
    const path = decodeURIComponent(new URL(request.url ?? '/', 'http://registry').pathname).slice(1);
    const tarball = /^-\/(.+)\/([^/]+)\.tgz$/.exec(path);
    if (tarball) {
      const served = byName.get(tarball[1] as string)?.find((candidate) => candidate.version === tarball[2]);
      if (!served?.file) return void response.writeHead(404).end();
      response.writeHead(200, { 'content-type': 'application/octet-stream' }).end(readFileSync(served.file));
      return;
    }
    const versions = byName.get(path);
    if (!versions) return void response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"Not found"}');
    const packument = {
      name: path,
      'dist-tags': {
        latest: versions
          .map((served) => served.version)
          .sort(compareVersions)
          .at(-1),
      },
      versions: Object.fromEntries(
        versions.map((served) => [
          served.version,
          { name: path, version: served.version, ...served.manifest, dist: { tarball: `${base}-/${path}/${served.version}.tgz`, integrity: served.integrity } },
        ]),
      ),
    };
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(packument));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
  return {
    url: base,
    uncached: packages.filter((served) => !served.file).map((served) => `${served.name}@${served.version}`),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Orders plain `major.minor.patch` versions (enough for a `latest` tag among a lockfile's few versions of one name). */
function compareVersions(left: string, right: string): number {
  const parts = (version: string) => version.split(/[.-]/).map((part) => Number.parseInt(part, 10) || 0);
  const [a, b] = [parts(left), parts(right)];
  for (let index = 0; index < Math.max(a.length, b.length); index++) if ((a[index] ?? 0) !== (b[index] ?? 0)) return (a[index] ?? 0) - (b[index] ?? 0);
  return 0;
}
