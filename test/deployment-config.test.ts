/**
 * docker-compose.yml, the Dockerfile and .dockerignore are for the project's users, who build and
 * run them elsewhere: they are checked here by tools, never by running them. The compose file
 * against the Compose Specification schema and its linter's rules (dclint), the Dockerfile with a
 * Dockerfile parser and validator (dockerfile-ast, dockerfile-utils); then what the project needs of
 * them: a current LTS base image, production dependencies only, a non-root user, every file read at
 * run time in the image, health checks, and each service given only the secrets it needs.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DCLinter } from 'dclint';
import { DockerfileParser, type Instruction } from 'dockerfile-ast';
import { validate as validateDockerfile } from 'dockerfile-utils';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { CONFIG_KEYS } from '../src/config.js';
import { PACKAGE_ROOT } from '../src/paths.js';

const COMPOSE_FILE = join(PACKAGE_ROOT, 'docker-compose.yml');
const dockerfileText = readFileSync(join(PACKAGE_ROOT, 'Dockerfile'), 'utf8');

/** The compose file as compose reads it: YAML merge keys (`<<: *anchor`) applied. */
interface ComposeService {
  build?: unknown;
  image?: string;
  env_file?: string | string[];
  environment?: Record<string, string>;
  secrets?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  volumes?: string[];
  command?: string[];
  profiles?: string[];
}
const compose = parseYaml(readFileSync(COMPOSE_FILE, 'utf8'), { merge: true }) as {
  services: Record<string, ComposeService>;
  secrets: Record<string, { file: string }>;
};
const services = compose.services;

/** What the compose linter reports for one file. */
interface LintResult {
  readonly messages: readonly { readonly line: number; readonly rule: string; readonly message: string }[];
}

/** Settings that hold a secret: those that may also come from a file (`X` and `X_FILE`), and the files. */
const SECRET_SETTINGS = CONFIG_KEYS.filter((k) => CONFIG_KEYS.includes(`${k}_FILE`)).flatMap((k) => [k, `${k}_FILE`]);

/** The secret settings each service is given (any other is blanked), and the compose secrets it mounts. */
const SECRETS_BY_SERVICE: Record<string, { settings: readonly string[]; secrets: readonly string[] }> = {
  worker: {
    settings: ['CASHOUT_API_TOKEN_FILE', 'CASHOUT_WEBHOOK_SECRET', 'CASHOUT_WEBHOOK_SECRET_FILE'],
    secrets: ['cashout_api_token'],
  },
  scheduler: { settings: [], secrets: [] },
  dashboard: {
    settings: ['CASHOUT_DASHBOARD_USERS_FILE', 'CASHOUT_DASHBOARD_USERS'],
    secrets: ['cashout_dashboard_users'],
  },
  cli: {
    settings: [
      'CASHOUT_API_TOKEN_FILE',
      'CASHOUT_MERCHANT_CODE',
      'CASHOUT_MERCHANT_CODE_FILE',
      'CASHOUT_HASH_KEY',
      'CASHOUT_HASH_KEY_FILE',
    ],
    secrets: ['cashout_api_token'],
  },
};

describe('docker-compose.yml', () => {
  it('passes the Compose Specification schema and the compose linter', () => {
    // Off: the order of services and keys, which the file keeps in reading order instead
    // (Redis first, then what depends on it). Every other rule of the linter applies.
    const linter = new DCLinter({
      rules: {
        'services-alphabetical-order': 0,
        'service-keys-order': 0,
        'require-quotes-in-ports': [2, { quoteType: 'double' }],
      },
      quiet: false,
      debug: false,
      exclude: [],
    });
    const [result] = linter.lintFiles([COMPOSE_FILE], false) as LintResult[];
    expect(result?.messages.map((m) => `${m.line}: ${m.rule}: ${m.message}`)).toEqual([]);
  });

  it('finds a broken compose file: the same check fails on an unknown key and a wrong type', () => {
    const linter = new DCLinter({ rules: {}, quiet: true, debug: false, exclude: [] });
    const bad = join(PACKAGE_ROOT, 'test', 'fixtures', 'deployment', 'broken-compose.yml');
    const [result] = linter.lintFiles([bad], false) as LintResult[];
    expect(result?.messages.map((m) => m.rule)).toContain('invalid-schema');
  });

  it('starts every service of the image only once Redis answers PONG, checked by the script the test runs', () => {
    const redis = services.redis!;
    expect(redis.healthcheck?.test).toEqual(['CMD', 'sh', '/usr/local/bin/redis-healthcheck.sh']);
    expect(redis.volumes).toContain('./scripts/redis-healthcheck.sh:/usr/local/bin/redis-healthcheck.sh:ro');
    for (const [name, s] of Object.entries(services)) {
      if (name === 'redis' || name === 'sandbox') continue;
      expect(s.depends_on?.redis?.condition, name).toBe('service_healthy');
    }
  });

  it('checks the worker and the scheduler through GET /healthz on CASHOUT_HEALTH_PORT', () => {
    for (const name of ['worker', 'scheduler']) {
      const s = services[name]!;
      expect(s.environment?.CASHOUT_HEALTH_PORT, name).toMatch(/^[1-9]\d*$/);
      const [kind, node, flag, script] = s.healthcheck?.test ?? [];
      expect([kind, node, flag], name).toEqual(['CMD', 'node', '-e']);
      expect(script).toContain("'/healthz'");
      expect(script).toContain('process.env.CASHOUT_HEALTH_PORT');
      expect(script).toContain('r.status===200?0:1');
    }
  });

  it('gives each service only the secrets it needs; the others are blanked even when .env sets them', () => {
    expect(SECRET_SETTINGS).toEqual(expect.arrayContaining(['CASHOUT_API_TOKEN', 'CASHOUT_DASHBOARD_USERS_FILE']));
    for (const [name, s] of Object.entries(services)) {
      const env = s.environment ?? {};
      const mine = SECRETS_BY_SERVICE[name];
      if (s.env_file === undefined) {
        // Without .env a service sees only what the file gives it: no secret setting at all.
        expect(
          Object.keys(env).filter((k) => SECRET_SETTINGS.includes(k)),
          name,
        ).toEqual([]);
        expect(s.secrets, name).toBeUndefined();
        continue;
      }
      expect(mine, `${name} reads .env: list the secrets it may have`).toBeDefined();
      for (const key of SECRET_SETTINGS) {
        if (mine!.settings.includes(key)) expect(env[key], `${name} ${key}`).not.toBe('');
        else expect(env[key], `${name} ${key}`).toBe('');
      }
      expect(s.secrets ?? [], name).toEqual(mine!.secrets);
      for (const secret of mine!.secrets) expect(Object.values(env), name).toContain(`/run/secrets/${secret}`);
    }
    expect(services.dashboard?.environment?.CASHOUT_API_TOKEN).toBe('');
    expect(services.dashboard?.environment?.CASHOUT_API_TOKEN_FILE).toBe('');
    expect(services.scheduler?.environment?.CASHOUT_API_TOKEN_FILE).toBe('');
    for (const secret of Object.values(compose.secrets)) expect(secret.file).toMatch(/^\.\/secrets\//);
  });
});

/** The instructions of the Dockerfile's last stage (from its last FROM). */
function finalStage(instructions: readonly Instruction[]): Instruction[] {
  const from = instructions.map((i) => i.getKeyword()).lastIndexOf('FROM');
  return instructions.slice(from);
}

/** Sources (build context paths) of the COPY instructions of `stage` that do not copy from another stage. */
function contextCopies(stage: readonly Instruction[]): string[] {
  return stage
    .filter((i) => i.getKeyword() === 'COPY' && !/--from=/.test(i.getTextContent()))
    .flatMap((i) =>
      i
        .getArguments()
        .slice(0, -1)
        .map((a) => a.getValue().replace(/^\.\//, '').replace(/\/$/, '')),
    );
}

/** Every `join(PACKAGE_ROOT, 'src', …)` path of the program's sources: files and folders it reads at run time. */
function runtimePaths(): string[] {
  const out = new Set<string>();
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.ts')) {
        const text = readFileSync(p, 'utf8');
        for (const m of text.matchAll(/join\(PACKAGE_ROOT,\s*((?:'[^']+'\s*,?\s*)+)\)/g)) {
          const parts = [...m[1]!.matchAll(/'([^']+)'/g)].map((x) => x[1]!);
          if (parts[0] === 'src') out.add(parts.join('/'));
        }
      }
    }
  };
  walk(join(PACKAGE_ROOT, 'src'));
  return [...out].sort();
}

const covers = (entry: string, path: string) => path === entry || path.startsWith(`${entry}/`);

describe('Dockerfile', () => {
  const instructions = DockerfileParser.parse(dockerfileText).getInstructions();
  const stage = finalStage(instructions);

  it('passes the Dockerfile validator', () => {
    expect(validateDockerfile(dockerfileText, {}).map((d) => d.message)).toEqual([]);
  });

  it('is built on a pinned current LTS Node.js image (an even major line, 24 or later), slim Debian', () => {
    const froms = instructions.filter((i) => i.getKeyword() === 'FROM').map((i) => i.getArguments()[0]!.getValue());
    expect(froms.length).toBeGreaterThanOrEqual(2);
    for (const image of froms) {
      const m = /^node:(\d+)-bookworm-slim$/.exec(image);
      expect(m, image).not.toBeNull();
      expect(Number(m![1]) % 2, image).toBe(0);
      expect(Number(m![1]), image).toBeGreaterThanOrEqual(24);
    }
  });

  it('installs production dependencies only in the image that runs, and runs as a user other than root', () => {
    const runs = stage.filter((i) => i.getKeyword() === 'RUN').map((i) => i.getRawArgumentsContent() ?? '');
    const installs = runs.filter((r) => /\bnpm (ci|install)\b/.test(r));
    expect(installs.length).toBe(1);
    expect(installs[0]).toMatch(/npm ci --omit=dev/);
    expect(runs.join('\n')).not.toMatch(/\btsc\b/);
    const keywords = stage.map((i) => i.getKeyword());
    const user = stage
      .filter((i) => i.getKeyword() === 'USER')
      .at(-1)
      ?.getRawArgumentsContent();
    expect(user).toBeDefined();
    expect(['root', '0']).not.toContain(user!.split(':')[0]);
    expect(keywords.lastIndexOf('USER')).toBeLessThan(keywords.indexOf('ENTRYPOINT'));
  });

  it('copies the compiled code and every file the program reads from src/ at run time', () => {
    const fromBuild = stage
      .filter((i) => i.getKeyword() === 'COPY' && /--from=build\b/.test(i.getTextContent()))
      .map((i) => i.getArguments().at(-1)!.getValue().replace(/^\.\//, ''));
    expect(fromBuild).toEqual(expect.arrayContaining(['dist/src', 'dist/jobs']));
    const copied = contextCopies(stage);
    expect(copied).toContain('bin');
    const needed = runtimePaths();
    expect(needed).toEqual(expect.arrayContaining(['src/ledger/lua', 'src/contract/supported-banks.json']));
    const files = (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { files: string[] }).files;
    for (const path of needed) {
      expect(
        copied.some((c) => covers(c, path)),
        `${path} is read at run time: COPY it into the image`,
      ).toBe(true);
      const inFiles = files.some((f) => covers(f, path));
      expect(inFiles, `${path} is read at run time: list it in package.json "files"`).toBe(true);
    }
    expect(copied).not.toContain('.');
  });
});

describe('.dockerignore', () => {
  const patterns = readFileSync(join(PACKAGE_ROOT, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));

  it('keeps secrets, local state and build output out of the build context', () => {
    const kept = ['.env', 'secrets', '.git', 'node_modules', 'dist', 'reports', 'inbox'];
    expect(patterns).toEqual(expect.arrayContaining(kept));
  });

  it('leaves in every path the Dockerfile copies from the context', () => {
    const sources = instructions().flatMap((i) => (i.getKeyword() === 'COPY' ? contextCopies([i]) : []));
    expect(sources.length).toBeGreaterThan(5);
    const excluded = patterns.filter((p) => !p.startsWith('!') && !/[*?[]/.test(p));
    for (const source of sources) {
      const hit = excluded.find((p) => covers(p, source));
      expect(hit, `${source} is copied by the Dockerfile but excluded by .dockerignore`).toBeUndefined();
    }
  });

  function instructions(): Instruction[] {
    return DockerfileParser.parse(dockerfileText).getInstructions();
  }
});
