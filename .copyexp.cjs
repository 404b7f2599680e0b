const pg = require('pg');
const { to } = require('pg-copy-streams');
(async () => {
  const c = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:55432/m' });
  await c.connect();
  const cyc = 'mc_d0000000-0000-4000-8000-000000000001';
  for (let r = 0; r < 3; r++) {
    const t = performance.now();
    const s = c.query(to(`copy (select body from merit_cycle_employees where merit_cycle_id='${cyc}' order by last_name, first_name, id) to stdout (format binary)`));
    let n = 0;
    for await (const chunk of s) n += chunk.length;
    console.log('single copy', ((performance.now() - t) / 1000).toFixed(2), 's', n);
  }
  await c.end();
})();
