// A full read of the deep cycle (100,000 employees) by a client, as a BI tool refreshing a
// table reads it: through REST (limit=100, every nextCursor) and through the OData feed
// (every @odata.nextLink, the feed's default page of 1,000), one after the other in the
// same run, timed end to end (docs/benchmarks.md). Each request is answered before the next
// is sent: the rate is one client's, not the server's capacity under load.

export interface FullRead {
  api: 'REST' | 'OData';
  employees: number;
  pages: number;
  seconds: number;
}

async function page(url: string, key: string): Promise<Record<string, unknown>> {
  const response = await fetch(url, { headers: { 'x-api-key': key } });
  if (response.status !== 200) {
    throw new Error(`${url} answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
  }
  return (await response.json()) as Record<string, unknown>;
}

async function restRead(base: string, key: string, cycleId: string): Promise<FullRead> {
  const list = `${base}/v1/compensationPlanning/meritCycles/${cycleId}/employees?limit=100`;
  const started = performance.now();
  let employees = 0;
  let pages = 0;
  let url: string | undefined = list;
  while (url) {
    const body = await page(url, key);
    employees += (body.data as unknown[]).length;
    pages++;
    const cursor = body.nextCursor as string | null;
    url = cursor ? `${list}&nextCursor=${encodeURIComponent(cursor)}` : undefined;
  }
  return { api: 'REST', employees, pages, seconds: (performance.now() - started) / 1000 };
}

async function feedRead(base: string, key: string, cycleId: string): Promise<FullRead> {
  const started = performance.now();
  let employees = 0;
  let pages = 0;
  let url: string | undefined = `${base}/odata/v4/MeritCycles('${cycleId}')/Employees`;
  while (url) {
    const body = await page(url, key);
    employees += (body.value as unknown[]).length;
    pages++;
    url = body['@odata.nextLink'] as string | undefined;
  }
  return { api: 'OData', employees, pages, seconds: (performance.now() - started) / 1000 };
}

/** `rounds` full reads through each, REST and the feed alternated. */
export async function fullReads(
  base: string,
  key: string,
  cycleId: string,
  rounds: number,
): Promise<FullRead[]> {
  const reads: FullRead[] = [];
  for (let round = 0; round < rounds; round++) {
    reads.push(await restRead(base, key, cycleId));
    reads.push(await feedRead(base, key, cycleId));
  }
  return reads;
}
