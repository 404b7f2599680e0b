/** The organisation the demo data set loads (kept apart from the generator and its faker). */
export const DEMO_ORGANIZATION = 'demo';
