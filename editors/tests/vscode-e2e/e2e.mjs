// Drives a running code-server (a real VS Code 1.139 workbench) with Debian's Chromium
// through playwright-core, as a user would: open files, look at the status bar, the
// Problems panel, a hover, run the sdy commands from the command palette, read the
// inlay hints and the propagated module. Screenshots of each step go to OUT.
//
//   node e2e.mjs URL WORKSPACE OUT SCENARIO
//
// SCENARIO is `setting` (the server comes from sdy.server.path in the User settings)
// or `bundled` (from the .vsix). Exits non-zero on the first failed check; prints
// `e2e: N passed, 0 failed` at the end.
import { chromium } from 'playwright-core';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const [url, workspace, out, scenario, logsDir] = process.argv.slice(2);
mkdirSync(out, { recursive: true });
const executablePath = process.env.CHROMIUM ?? ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find(existsSync);
const TIMEOUT = Number(process.env.SDY_E2E_TIMEOUT_MS ?? 60000);
let passed = 0;
let step = 0;

const browser = await chromium.launch({
  executablePath,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking'],
});
const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
page.setDefaultTimeout(TIMEOUT);

async function shot(name) {
  step += 1;
  await page.screenshot({ path: join(out, `${String(step).padStart(2, '0')}-${name}.png`) });
}

async function check(name, fn) {
  const t0 = Date.now();
  try {
    await fn();
  } catch (err) {
    await shot(`FAILED-${name.replace(/\W+/g, '-')}`).catch(() => {});
    console.error(`e2e [${scenario}]: FAIL: ${name}: ${err?.message ?? err}`);
    await browser.close();
    process.exit(1);
  }
  passed += 1;
  console.log(`e2e [${scenario}]: ok ${name} (${Date.now() - t0} ms)`);
}

/** Waits until `fn` returns a truthy value (polling), or throws `what`. */
async function until(what, fn, timeout = TIMEOUT) {
  const end = Date.now() + timeout;
  let last;
  while (Date.now() < end) {
    last = await fn().catch((e) => e);
    if (last && !(last instanceof Error)) return last;
    await page.waitForTimeout(250);
  }
  throw new Error(`${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
}

const text = (selector) => page.locator(selector).first().innerText();

async function command(title) {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input').first();
  await input.waitFor({ state: 'visible' });
  await input.fill(`>${title}`);
  await until(`"${title}" in the command palette`, async () => {
    const labels = await page.locator('.quick-input-list .monaco-list-row').allInnerTexts();
    return labels.some((l) => l.includes(title));
  });
  await page.keyboard.press('Enter');
}

async function openFile(name) {
  await page.keyboard.press('Control+P');
  const input = page.locator('.quick-input-widget input').first();
  await input.waitFor({ state: 'visible' });
  await input.fill(name);
  await until(`${name} in quick open`, async () => {
    const labels = await page.locator('.quick-input-list .monaco-list-row').allInnerTexts();
    return labels.some((l) => l.includes(name));
  });
  await page.keyboard.press('Enter');
  // The window title names the active editor's file.
  await until(`${name} open in the editor`, async () => (await page.title()).startsWith(name));
  // Focus the text.
  await page.locator('.editor-instance .monaco-editor .view-lines').first().click({ position: { x: 5, y: 5 } });
}

async function goTo(line, col) {
  await page.keyboard.press('Control+G');
  const input = page.locator('.quick-input-widget input').first();
  await input.waitFor({ state: 'visible' });
  await input.fill(`:${line}:${col}`);
  await page.keyboard.press('Enter');
}

const editorText = () => page.locator('.editor-instance .monaco-editor .view-lines').first().innerText();

await check('the workbench loads', async () => {
  await page.goto(`${url}/?folder=${encodeURIComponent(workspace)}`);
  await page.locator('.monaco-workbench').waitFor();
  await until('the explorer shows the workspace', async () =>
    (await page.locator('.explorer-folders-view').allInnerTexts()).join('\n').includes('mlp.mlir'),
  );
  await shot('workbench');
});

await check('language mode MLIR for a .mlir file', async () => {
  await openFile('mistakes.mlir');
  await until('the status bar says MLIR', async () => (await text('#status\\.editor\\.mode')).trim() === 'MLIR');
  await shot('mistakes-open');
});

await check('the Problems panel has Shardy\'s messages', async () => {
  await page.keyboard.press('Control+Shift+M');
  await until('an unknown-axis error in Problems', async () => {
    const t = await page.locator('.markers-panel').first().innerText();
    return /unknown axis name/.test(t) ? t : false;
  });
  await shot('problems');
});

await check('hover on a sharding explains it', async () => {
  await openFile('mlp.mlir');
  await goTo(6, 60);
  await command('Show or Focus Hover');
  await until('the explain hover', async () => {
    const t = await page.locator('.monaco-hover:visible').first().innerText();
    return /per-device|PartitionSpec|P\(/.test(t) ? t : false;
  });
  await shot('hover');
  await page.keyboard.press('Escape');
});

await check('sdy: Propagate Shardings: status bar and inlay hints', async () => {
  const before = await editorText();
  await command('sdy: Propagate Shardings');
  const status = await until('the status bar message', async () => {
    const t = await page.locator('#workbench\\.parts\\.statusbar').innerText();
    return /propagated/.test(t) ? t : false;
  }, 30000);
  if (/sdy: sdy:/.test(status)) throw new Error(`the prefix is doubled: ${status}`);
  // `%h` has no sharding written: propagation gives it one, shown after its name.
  if (/%h\s*\[\{/.test(before)) throw new Error(`hints before propagation: ${before}`);
  const hinted = await until('an inlay hint with the sharding of %h', async () => {
    const t = await editorText();
    return /%h\s*\[\{"batch"/.test(t) ? t : false;
  }, 30000);
  if (/…/.test(hinted)) throw new Error('an inlay hint is cut with "…"');
  await shot('propagated-hints');
});

await check('sdy: Show Propagated Module opens it beside', async () => {
  await command('sdy: Show Propagated Module');
  await until('mlp.propagated.mlir is the active editor', async () =>
    (await page.title()).startsWith('mlp.propagated.mlir'),
  );
  await until('the propagated module text', async () => {
    const all = await page.locator('.editor-instance .monaco-editor .view-lines').allInnerTexts();
    // The editor renders spaces as non-breaking ones.
    return all.some((t) => t.replace(/\u00a0/g, ' ').includes('{sdy.sharding = #sdy.sharding<@mesh'));
  });
  await shot('propagated-module');
});

await check('the output channel has the server and no error', async () => {
  const log = await until('the "sdy Language Server" output log', async () => {
    const files = findFiles(logsDir, (f) => f.endsWith('sdy Language Server.log'));
    const t = files.map((f) => readFileSync(f, 'utf8')).join('\n');
    return /Starting sdy-lsp/.test(t) ? t : false;
  });
  const want = scenario === 'setting' ? 'found via setting' : 'found via bundled';
  if (!log.includes(want)) throw new Error(`expected "${want}" in:\n${log}`);
  const bad = log.split('\n').filter((l) => /error|fail|cannot|not sent|exception/i.test(l));
  if (bad.length > 0) throw new Error(`errors in the output channel:\n${bad.join('\n')}`);
});

function findFiles(dir, pred) {
  const found = [];
  const walk = (d) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (pred(p)) found.push(p);
    }
  };
  if (existsSync(dir)) walk(dir);
  return found;
}

await browser.close();
console.log(`e2e [${scenario}]: ${passed} passed, 0 failed`);
