/**
 * `npm test` runs two checks before the tests: `check:structure` (no import circle, no import back
 * up the layers of .dependency-cruiser.cjs) and `check:format` (Prettier). Each is run here on a
 * small tree of its own, to show that it fails on what it is there to catch and passes on clean code.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../src/paths.js';

const run = promisify(execFile);
const bin = (name: string) => join(PACKAGE_ROOT, 'node_modules', '.bin', name);

interface Outcome {
  readonly code: number;
  readonly output: string;
}

async function outcome(command: string, args: string[], cwd: string): Promise<Outcome> {
  try {
    const { stdout, stderr } = await run(command, args, { cwd });
    return { code: 0, output: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

let dir: string;

async function tree(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(join(dir, 'tree-'));
  for (const config of ['.dependency-cruiser.cjs', '.prettierrc.json', '.prettierignore']) {
    await copyFile(join(PACKAGE_ROOT, config), join(root, config));
  }
  await writeFile(
    join(root, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }),
  );
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
  return root;
}

const structure = (root: string) =>
  outcome(bin('depcruise'), ['src', '--config', '.dependency-cruiser.cjs', '--ts-config', 'tsconfig.json'], root);
const format = (root: string) => outcome(bin('prettier'), ['--check', 'src'], root);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cashout-structure-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('check:structure', () => {
  it('passes when every import goes down the layers', async () => {
    const root = await tree({
      'src/money.ts': "export const ZERO = '0.00';\n",
      'src/import/read.ts': "import { ZERO } from '../money.js';\nexport const first = ZERO;\n",
    });
    const r = await structure(root);
    expect(r.output).toContain('no dependency violations');
    expect(r.code).toBe(0);
  });

  it('fails on an import circle and names its files', async () => {
    const root = await tree({
      'src/results/write-report.ts': "import { b } from './summary-html.js';\nexport const a = () => b;\n",
      'src/results/summary-html.ts': "import { a } from './write-report.js';\nexport const b = () => a;\n",
    });
    const r = await structure(root);
    expect(r.code).not.toBe(0);
    expect(r.output).toContain('no-circular');
    expect(r.output).toContain('src/results/summary-html.ts');
  });

  it('fails on an import back up the layers', async () => {
    const root = await tree({
      'src/batch/group.ts': 'export const group = 1;\n',
      'src/import/read.ts': "import { group } from '../batch/group.js';\nexport const read = group;\n",
    });
    const r = await structure(root);
    expect(r.code).not.toBe(0);
    expect(r.output).toMatch(/imports-up: src\/import\/read\.ts → src\/batch\/group\.ts/);
  });

  it('fails on a source file that no layer names', async () => {
    const root = await tree({
      'src/money.ts': "export const ZERO = '0.00';\n",
      'src/elsewhere/thing.ts': "import { ZERO } from '../money.js';\nexport const thing = ZERO;\n",
    });
    const r = await structure(root);
    expect(r.code).not.toBe(0);
    expect(r.output).toContain('no-layer');
  });
});

describe('check:format', () => {
  it('passes on formatted code and fails on an unformatted file, naming it', async () => {
    const clean = await tree({ 'src/money.ts': "export const ZERO = '0.00';\n" });
    expect((await format(clean)).code).toBe(0);

    const messy = await tree({ 'src/money.ts': 'export const ZERO="0.00"\n' });
    const r = await format(messy);
    expect(r.code).not.toBe(0);
    expect(r.output).toContain('src/money.ts');
  });
});
