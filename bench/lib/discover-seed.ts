import pg from "pg";

const CITIES = [
  ["Berlin", "DE", 52.52, 13.405],
  ["Hamburg", "DE", 53.551, 9.994],
  ["Munich", "DE", 48.137, 11.575],
  ["Paris", "FR", 48.857, 2.352],
  ["Lyon", "FR", 45.764, 4.836],
  ["Madrid", "ES", 40.417, -3.704],
  ["Barcelona", "ES", 41.385, 2.173],
  ["London", "GB", 51.507, -0.128],
] as const;

const INTERESTS = [
  "hiking", "cooking", "jazz", "techno", "yoga", "running", "climbing", "photography", "travel", "books",
  "board games", "video games", "cinema", "theatre", "art", "museums", "football", "tennis", "cycling", "swimming",
  "wine", "coffee", "baking", "gardening", "dogs", "cats", "dancing", "concerts", "languages", "volunteering",
];

const cities = `(values ${CITIES.map(([name, country, lat, lon], i) => `(${i}, '${name}', '${country}', ${lat}::float8, ${lon}::float8)`).join(", ")}) as c(i, name, country, lat, lon)`;
const interests = `array[${INTERESTS.map((s) => `'${s}'`).join(", ")}]`;

/** Users and their profiles for the user ids `source` selects (a column `uid`), in one statement. */
const profileSelect = (source: string) => `
  with src as (${source}),
  r as (
    select uid, floor(random() * ${CITIES.length})::int as city, random() as gx, random() as ix, 18 + floor(power(random(), 1.6) * 42)::int as age,
           random() as jlat, random() as jlon, random() as nopos, random() as hide, random() as act, random() as made, random() as spread, random() as far, random() as pick
    from src
  )
  insert into profiles (user_id, display_name, birth_date, gender, interested_in, age_min, age_max, max_distance_km, interests, latitude, longitude,
                    city, country, visibility, created_at, updated_at, last_active_at, bio, tagline, photos, languages)
  select r.uid, 'Member ' || right(r.uid, 6),
     (current_date - make_interval(years => r.age))::date - floor(random() * 360)::int,
     g.gender,
     case when g.gender = 'woman' then (case when r.ix < 0.85 then array['man'] when r.ix < 0.95 then array['man', 'woman'] else array['woman'] end)
          when g.gender = 'man' then (case when r.ix < 0.88 then array['woman'] when r.ix < 0.95 then array['woman', 'man'] else array['man'] end)
          else array['woman', 'man', 'nonbinary', 'other'] end,
     greatest(18, r.age - 3 - floor(r.spread * 8)::int), least(99, r.age + 3 + floor(r.spread * 10)::int),
     (array[10, 25, 50, 50, 80, 100, 150])[1 + floor(r.far * 7)::int],
     -- 3–6 distinct interests: a run of the list from a random start (no per-row subquery).
     (${interests})[1 + floor(r.pick * ${INTERESTS.length - 6})::int : 1 + floor(r.pick * ${INTERESTS.length - 6})::int + 2 + floor(r.ix * 4)::int],
     case when r.nopos < 0.03 then null else c.lat + (r.jlat - 0.5) * 0.55 end,
     case when r.nopos < 0.03 then null else c.lon + (r.jlon - 0.5) * 0.85 end,
     c.name, c.country,
     case when r.hide < 0.05 then 'hidden' else 'visible' end,
     now() - r.made * interval '365 days', now(), now() - power(r.act, 3) * interval '30 days',
     'Hello from ' || c.name, 'Looking for someone nice', array['https://img.example/' || r.uid || '.jpg'], array['en']
  from r join ${cities} on c.i = r.city
  cross join lateral (select case when r.gx < 0.47 then 'woman' when r.gx < 0.94 then 'man' when r.gx < 0.98 then 'nonbinary' else 'other' end as gender) g`;

/** How many connections load the rows side by side; each loads its own slice of the ids. */
const LOADERS = 4;

/**
 * Users and profiles in a handful of set-based statements: positions jittered around 8 cities
 * (±~30 km), 3% without a position, 5% hidden, mostly straight with some bi and nonbinary
 * people, age wishes around each person's own age, 3–6 interests each. The bench users get the
 * same kind of profile plus an enterprise subscription. Returns how long each phase took.
 *
 * A bulk load as an operator would run one (the order pg_restore uses): the rows first, over
 * several connections, each without a flush wait per statement; then the secondary indexes and
 * the profiles' foreign key, each built once (a sort, or one join) rather than kept up row by row,
 * one after another with a larger sort memory (side by side, they fought over two cores and took
 * longer); then the statistics and the visibility map that autovacuum would write soon after a
 * load anyway. Measured in docs/design/performance.md ("Bulk load of the discover bench").
 */
export async function seedProfiles(url: string, count: number, benchIds: string[]): Promise<string> {
  const phases: string[] = [];
  let mark = Date.now();
  const phase = (name: string) => {
    phases.push(`${name} ${((Date.now() - mark) / 1000).toFixed(1)} s`);
    mark = Date.now();
  };
  const clients = await Promise.all(
    Array.from({ length: LOADERS }, async (_, i) => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query("set synchronous_commit = off");
      await client.query("set maintenance_work_mem = '512MB'");
      // A seed per loader: the same count gives the same people on every run.
      await client.query("select setseed($1)", [0.42 - i / 100]);
      return client;
    }),
  );
  const [main] = clients as [pg.Client];
  try {
    const { rows: deferred } = await main.query<{ drop: string; create: string }>(
      `select format('drop index %I', indexname) as drop, indexdef as create from pg_indexes
       where schemaname = 'public' and tablename in ('users', 'profiles') and indexname not in (select conname from pg_constraint)
       union all
       select format('alter table %I drop constraint %I', conrelid::regclass, conname),
              format('alter table %I add constraint %I %s', conrelid::regclass, conname, pg_get_constraintdef(oid))
       from pg_constraint
       where conrelid in ('users'::regclass, 'profiles'::regclass) and contype in ('u', 'f')`,
    );
    for (const { drop } of deferred) await main.query(drop);
    const slice = Math.ceil(count / LOADERS);
    await Promise.all(
      clients.map(async (client, i) => {
        const from = i * slice + 1;
        const to = Math.min(count, (i + 1) * slice);
        if (from > to) return;
        await client.query(
          `insert into users (id, subject, email, role, created_at)
           select 'usr_seed' || lpad(g::text, 7, '0'), 'seed-' || g, 'seed' || g || '@bench.test', 'user', now() - random() * interval '365 days'
           from generate_series($1::int, $2::int) g`,
          [from, to],
        );
        await client.query(profileSelect(`select 'usr_seed' || lpad(g::text, 7, '0') as uid from generate_series(${from}, ${to}) g`));
      }),
    );
    // Bench users: visible, placed, broad wishes, so their feeds are full and realistic.
    await main.query(profileSelect(`select unnest($1::text[]) as uid`), [benchIds]);
    await main.query(`update profiles set visibility = 'visible', latitude = coalesce(latitude, 52.52), longitude = coalesce(longitude, 13.405) where user_id = any($1)`, [benchIds]);
    await main.query(
      `insert into subscriptions (id, user_id, plan_id, current_period_start, current_period_end, created_at, updated_at)
       select 'sub_' || u, u, 'enterprise', now(), now() + interval '30 days', now(), now() from unnest($1::text[]) u`,
      [benchIds],
    );
    phase("rows");
    for (const { create } of deferred) await main.query(create);
    phase("indexes and keys");
    await main.query("vacuum analyze users, profiles, subscriptions");
    await untilAllVisible(main);
    phase("vacuum analyze");
    return phases.join(", ");
  } finally {
    await Promise.all(clients.map((c) => c.end()));
  }
}

/**
 * A vacuum marks a page all-visible only when each row's inserting transaction is known committed
 * from its hint bit, and the loaders commit without waiting for the flush, which keeps the hint
 * unset until the WAL writer catches up (and a transaction left open would hold the rows back the
 * same way). A vacuum right after the load can so leave the map empty and every index-only scan of
 * the run fetching from the heap. Vacuums again until at least 99 % of the profiles' pages are
 * all-visible, naming any open transaction, for at most 30 s.
 */
async function untilAllVisible(client: pg.Client): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { rows } = await client.query<{ share: number }>(
      "select relallvisible::float8 / greatest(relpages, 1) as share from pg_class where oid = 'profiles'::regclass",
    );
    if ((rows[0]?.share ?? 0) >= 0.99) return;
    const { rows: holders } = await client.query<{ pid: number; state: string; query: string }>(
      `select pid, state, left(query, 80) as query from pg_stat_activity
       where datname = current_database() and pid <> pg_backend_pid() and backend_xmin is not null`,
    );
    if (Date.now() > deadline) throw new Error(`profiles still not all-visible after vacuuming for 30 s; horizon held by ${JSON.stringify(holders)}`);
    console.log(`profiles ${((rows[0]?.share ?? 0) * 100).toFixed(0)} % all-visible after vacuum; open: ${JSON.stringify(holders)}; vacuuming again`);
    await new Promise((resolve) => setTimeout(resolve, 250));
    await client.query("vacuum profiles");
  }
}
