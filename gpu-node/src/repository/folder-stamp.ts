/**
 * A model folder's stamp from file metadata alone (path, size, mtime, inode of every file, links
 * followed), so that a poll can tell an unchanged model without reading, parsing or completing any of
 * its files: a model costs a few readdir and stat calls per poll. Any change a fingerprint would see
 * (model-directory.ts) changes the stamp too; the stamp may also change when the fingerprint does not
 * (a file rewritten with the same bytes), which only costs one reading of the folder.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** The stamp of `folder`, or undefined when it cannot be read (the load that follows says why). */
export async function folderStamp(folder: string): Promise<string | undefined> {
  const lines: string[] = [];
  try {
    await stampInto(folder, '', lines);
  } catch {
    return undefined;
  }
  return lines.join('\n');
}

async function stampInto(path: string, relative: string, lines: string[]): Promise<void> {
  const info = await stat(path);
  if (!info.isDirectory()) {
    lines.push(`${relative}\0${info.size}\0${info.mtimeMs}\0${info.ino}`);
    return;
  }
  lines.push(`${relative}/\0${info.ino}`);
  const names = (await readdir(path)).sort();
  for (const name of names) await stampInto(join(path, name), `${relative}/${name}`, lines);
}
