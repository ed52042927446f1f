// `why <drawer_id>`: why a drawer sits where it does: how its wing and room were chosen (mined,
// diary, filed by an agent), every later move (metadata.placement_history), its provenance, and the
// tunnels and hallways touching its room. Reads only.

import { basename, dirname, relative, sep } from 'node:path';

import { readSummary } from '../memory/curation/compress.js';
import { DIARY_TYPE } from '../memory/drawers/diary.js';
import { inferHallways } from '../memory/navigation/hallways.js';
import type { Memory } from '../memory/drawers/memory.js';
import { roomProfiles } from '../memory/navigation/room-profiles.js';
import { listTunnels, type Tunnel } from '../memory/navigation/tunnels.js';
import { readManifest } from './manifest.js';
import { ADAPTERS } from './adapters.js';
import { defaultWing, projectRoom, splitRoomsOf } from './walk.js';

interface Move {
  from: { wing: string; room: string };
  to: { wing: string; room: string };
  at: string;
  via: string;
}

function movesOf(metadata: Record<string, unknown>): Move[] {
  const raw = metadata.placement_history;
  return Array.isArray(raw) ? raw.filter((m): m is Move => typeof m === 'object' && m !== null && 'from' in m && 'to' in m) : [];
}

function minedReasons(palacePath: string, sourceFile: string, wing: string, room: string, metadata: Record<string, unknown>) {
  const entry = readManifest(palacePath)[sourceFile];
  const mode = typeof metadata.mode === 'string' ? metadata.mode : (entry?.mode ?? 'projects');
  if (!entry)
    return {
      mined: { root: null, mode, mined_at: null },
      reasons: [`mined from ${sourceFile} (${mode} mode); the mined-files manifest no longer lists that file, so how the mine placed it is not known`],
    };
  const reasons: string[] = [];
  const folderWing = [defaultWing(entry.root), defaultWing(dirname(entry.root))].includes(wing);
  reasons.push(
    folderWing
      ? `wing '${wing}' is the name of the mined folder (${entry.root})`
      : `wing '${wing}' was given explicitly (--wing) when ${entry.root} was mined`,
  );
  const adapter = ADAPTERS.find((a) => a.room === room);
  if (mode === 'projects' && [projectRoom(entry.root, sourceFile), projectRoom(dirname(entry.root), sourceFile)].includes(room))
    reasons.push(
      room === 'general' && !relative(entry.root, sourceFile).includes('/')
        ? `room 'general': ${basename(sourceFile)} sits at the top of the mined folder, in no sub-folder`
        : `room '${room}' is the first sub-folder of the mined folder that holds the file`,
    );
  else if (mode === 'projects' && splitRoomsOf(entry.root, sourceFile).includes(room)) {
    const folder = relative(entry.root, sourceFile).split(sep)[0] ?? '';
    reasons.push(`room '${room}' is the sub-folder of ${folder}/ that holds the file: ${folder}/ held most of the mined files, so its sub-folders became the rooms`);
  } else if (mode === 'convos' && adapter) reasons.push(`room '${room}' is the room of the '${adapter.name}' source adapter`);
  else if (mode === 'convos' && typeof metadata.format === 'string')
    reasons.push(`room '${room}' comes from the transcript format (${metadata.format}) recognised when the conversation was mined`);
  else if (mode === 'extract' && room === 'documents') reasons.push(`room 'documents' is where extracted documents go`);
  else reasons.push(`room '${room}' was given explicitly (--room) when ${entry.root} was mined`);
  return { mined: { root: entry.root, mode, mined_at: entry.mined_at }, reasons };
}

export async function whyDrawer(memory: Memory, palacePath: string, entityNames: readonly string[], rawId: unknown) {
  const d = await memory.getDrawer(rawId);
  const moves = movesOf(d.metadata);
  const filedIn = moves[0]?.from ?? { wing: d.wing, room: d.room };
  let origin: 'mined' | 'diary' | 'added';
  let reasons: string[];
  let mined: { root: string | null; mode: string; mined_at: string | null } | null = null;
  if (d.metadata.type === DIARY_TYPE) {
    origin = 'diary';
    const agent = typeof d.metadata.agent === 'string' ? d.metadata.agent : d.created_by;
    reasons = [`a diary entry of agent '${agent}': diary entries go to the agent's own wing ('${filedIn.wing}'), room '${filedIn.room}'`];
  } else if (d.source_file && typeof d.metadata.mode === 'string') {
    origin = 'mined';
    const r = minedReasons(palacePath, d.source_file, filedIn.wing, filedIn.room, d.metadata);
    mined = r.mined;
    reasons = r.reasons;
  } else {
    origin = 'added';
    reasons = [
      `filed by '${d.created_by}' through palace_add_drawer (or palace drawer add / checkpoint): the caller chose wing '${filedIn.wing}' and room '${filedIn.room}'`,
    ];
  }
  for (const m of moves) reasons.push(`moved from ${m.from.wing}/${m.from.room} to ${m.to.wing}/${m.to.room} at ${m.at} (${m.via})`);
  const tunnels = (await listTunnels(memory, palacePath, { wing: d.wing })).tunnels.filter((t: Tunnel) =>
    t.kind === 'inferred' ? t.room === d.room : [t.source, t.target].some((e) => e.wing === d.wing && e.room === d.room),
  );
  const hallways = inferHallways(await roomProfiles(memory, entityNames, { wing: d.wing }), palacePath).filter((h) => h.rooms.includes(d.room));
  const summary = readSummary(palacePath, d.chunk_ids?.[0] ?? d.drawer_id);
  return {
    drawer_id: d.drawer_id,
    wing: d.wing,
    room: d.room,
    origin,
    filed_in: filedIn,
    moved: moves.length > 0,
    reasons,
    source_file: d.source_file,
    filed_at: d.filed_at,
    created_by: d.created_by,
    added_by: d.added_by,
    tags: d.tags,
    placement_history: moves,
    mined,
    tunnels,
    hallways,
    aaak: summary?.text ?? null,
  };
}
