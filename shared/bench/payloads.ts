/**
 * Realistic API bodies for the shape bench: records of a blog API (nested author, tags, comments,
 * ids, timestamps, e-mails, URLs, nullable fields), generated from a fixed seed so every run
 * measures the same bytes.
 */

/** Deterministic PRNG (mulberry32): the same payloads on every machine. */
function randomFrom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = [
  'alpha',
  'shape',
  'proxy',
  'review',
  'deploy',
  'staging',
  'version',
  'capture',
  'endpoint',
  'schema',
  'evidence',
  'traffic',
  'build',
  'commit',
];

class Generator {
  private readonly random: () => number;

  constructor(seed: number) {
    this.random = randomFrom(seed);
  }

  integer(max: number): number {
    return Math.floor(this.random() * max);
  }

  words(count: number): string {
    return Array.from({ length: count }, () => WORDS[this.integer(WORDS.length)]).join(' ');
  }

  uuid(): string {
    const hex = (length: number): string => Array.from({ length }, () => this.integer(16).toString(16)).join('');
    return `${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(12)}`;
  }

  timestamp(): string {
    return new Date(
      Date.UTC(2026, this.integer(12), 1 + this.integer(28), this.integer(24), this.integer(60), this.integer(60)),
    ).toISOString();
  }

  person(id: number): Record<string, unknown> {
    const name = this.words(2);
    return {
      id,
      name,
      email: `${name.replace(' ', '.')}@example.com`,
      url: `https://example.com/users/${id}`,
      verified: this.random() < 0.5,
    };
  }

  /** A blog post of about 0.7–1 KB of JSON. */
  post(id: number): Record<string, unknown> {
    return {
      id,
      uuid: this.uuid(),
      title: this.words(5),
      body: this.words(20 + this.integer(20)),
      published: this.random() < 0.7,
      rating: this.random() < 0.2 ? null : Math.round(this.random() * 50) / 10,
      createdAt: this.timestamp(),
      updatedAt: this.random() < 0.3 ? null : this.timestamp(),
      author: this.person(this.integer(1000)),
      tags: Array.from({ length: this.integer(4) }, () => this.words(1)),
      metrics: { views: this.integer(100_000), likes: this.integer(5_000), shares: this.integer(500) },
      comments: Array.from({ length: this.integer(3) }, (_, index) => ({
        id: index + 1,
        author: this.person(this.integer(1000)),
        text: this.words(8),
        createdAt: this.timestamp(),
      })),
    };
  }
}

export interface Payload {
  name: string;
  text: string;
}

/** A list page of posts, grown until its JSON text reaches `bytes`. */
function postPage(bytes: number, seed: number): string {
  const generator = new Generator(seed);
  const data: unknown[] = [];
  // Count the bytes of each post as it is added: re-serialising the page every time is quadratic.
  let dataBytes = 0;
  while (dataBytes < bytes - 100) {
    const post = generator.post(data.length + 1);
    data.push(post);
    dataBytes += JSON.stringify(post).length + 1;
  }
  return JSON.stringify({
    data,
    page: { number: 1, size: data.length, total: data.length * 7, next: 'https://example.com/posts?page=2' },
  });
}

/** The four sizes of the bench: one small record (~200 B), and list pages of ~3 KB, ~100 KB and ~1 MB. */
export function benchPayloads(): Payload[] {
  const small = {
    id: 17,
    title: 'Spectator watches traffic',
    author: 'Ann Example',
    email: 'ann@example.com',
    published: true,
    createdAt: '2026-11-22T00:25:00.000Z',
    tags: ['api', 'docs'],
    rating: 4.5,
  };
  return [
    { name: '200 B record', text: JSON.stringify(small) },
    { name: '3 KB page', text: postPage(3 * 1024, 1) },
    { name: '100 KB page', text: postPage(100 * 1024, 2) },
    { name: '1 MB page', text: postPage(1024 * 1024, 3) },
  ];
}
