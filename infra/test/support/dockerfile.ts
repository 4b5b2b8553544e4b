/**
 * A Dockerfile read into stages of instructions: enough to check what an image runs, as whom, on
 * which ports, and which files of the project it copies. Continuation lines are joined, comments
 * dropped, and ${ARG} references in FROM resolved from the global ARG defaults.
 */
export interface Instruction {
  readonly keyword: string;
  readonly args: string;
}

export interface Stage {
  readonly from: string;
  readonly name: string | undefined;
  readonly instructions: Instruction[];
}

export function parseDockerfile(text: string): { args: Record<string, string>; stages: Stage[] } {
  const logical: string[] = [];
  let current = '';
  for (const raw of text.split('\n')) {
    const line = raw.trimEnd();
    if (/^\s*#/.test(line)) continue;
    if (line.endsWith('\\')) {
      current += `${line.slice(0, -1)} `;
      continue;
    }
    current += line;
    if (current.trim() !== '') logical.push(current.trim());
    current = '';
  }
  const args: Record<string, string> = {};
  const stages: Stage[] = [];
  for (const line of logical) {
    const match = /^(\w+)\s+([\s\S]*)$/.exec(line);
    if (!match) continue;
    const keyword = (match[1] ?? '').toUpperCase();
    const rest = (match[2] ?? '').trim();
    if (keyword === 'FROM') {
      const [image = '', as, name] = rest.split(/\s+/);
      const resolved = image.replace(/\$\{(\w+)\}/g, (_, n: string) => args[n] ?? `\${${n}}`);
      stages.push({ from: resolved, name: as?.toUpperCase() === 'AS' ? name : undefined, instructions: [] });
    } else if (keyword === 'ARG' && stages.length === 0) {
      const [k = '', v = ''] = rest.split('=');
      args[k] = v;
    } else {
      stages.at(-1)?.instructions.push({ keyword, args: rest });
    }
  }
  return { args, stages };
}

/** The exec form of CMD/ENTRYPOINT/HEALTHCHECK CMD (a JSON array); the shell form is refused. */
export function execForm(args: string): string[] {
  const json = args.replace(/^[\s\S]*?(?=\[)/, '');
  return JSON.parse(json) as string[];
}

export function last(stage: Stage, keyword: string): Instruction | undefined {
  return stage.instructions.filter((i) => i.keyword === keyword).at(-1);
}

export function all(stage: Stage, keyword: string): Instruction[] {
  return stage.instructions.filter((i) => i.keyword === keyword);
}
