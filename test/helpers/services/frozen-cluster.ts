// A PostgreSQL cluster that stops answering without closing anything (a network cut, a
// frozen host): its processes stopped with SIGSTOP, connections left open, nothing
// refused; SIGCONT lets it go on (test/production/frozen-database.test.ts,
// test/db/frozen-bound.test.ts).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PostgresCluster } from './postgres.js';

/** The postmaster (first line of postmaster.pid) and every process it started. */
function clusterProcesses(cluster: PostgresCluster): number[] {
  const postmaster = Number(
    readFileSync(join(cluster.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0],
  );
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // /proc/PID/stat: "pid (name) state ppid …"; the name may hold spaces and parentheses.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === postmaster) children.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return [postmaster, ...children];
}

/** Freezes and thaws one cluster; thaw() is safe to call when nothing is frozen. */
export class ClusterFreezer {
  private frozen: number[] = [];

  constructor(private readonly cluster: PostgresCluster) {}

  /** SIGSTOP: the postmaster first, so that it starts no new process meanwhile. */
  freeze(): void {
    this.frozen = clusterProcesses(this.cluster);
    for (const pid of this.frozen) process.kill(pid, 'SIGSTOP');
  }

  thaw(): void {
    for (const pid of this.frozen.reverse()) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // exited
      }
    }
    this.frozen = [];
  }
}
