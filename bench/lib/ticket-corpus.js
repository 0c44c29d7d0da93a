'use strict';
// Synthetic support-ticket text for the semantic_search bench, in two shapes:
//   topics   (default) a vocabulary of 3,000 made-up words with Zipf frequencies, 60 topics of 150
//            words each (Zipf within the topic too); a ticket is mostly one topic, sometimes two,
//            with some background words. Queries are a few words of one topic. Text with a long
//            tail of words and themes, as real tickets have: the nearest ten stand apart.
//   uniform  every word drawn evenly from 58 words: every ticket shares most words with every
//            query, so the 10th and the 500th score differ in the third decimal. A stress case
//            for an approximate index, kept to show it (BENCH_SEM_CORPUS=uniform).

function prng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const UNIFORM_WORDS = (
  'refund invoice billing charge card payment login password reset account locked email shipping ' +
  'delivery late parcel courier address damaged broken screen battery charger warranty repair ' +
  'replacement order cancel subscription renewal discount coupon price slow crash error update ' +
  'install sync calendar export report dashboard tent backpack lantern stove jacket zipper seam'
).split(' ');

const SYLLABLES = (
  'ba be bi bo bu da de di do du ka ke ki ko ku la le li lo lu ma me mi mo mu na ne ni no nu ' +
  'pa pe pi po pu ra re ri ro ru sa se si so su ta te ti to tu va ve vi vo vu za ze zi zo zu'
).split(' ');

/** Index drawn with weight 1 / (rank + 1)^s: cumulative weights, searched by bisection. */
function zipf(n, s) {
  const cumulative = new Float64Array(n);
  let total = 0;
  for (let i = 0; i < n; i++) cumulative[i] = total += 1 / Math.pow(i + 1, s);
  return (rand) => {
    const x = rand() * total;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

function topicCorpus(seed) {
  const rand = prng(seed);
  const VOCABULARY = 3_000;
  const TOPICS = 60;
  const TOPIC_WORDS = 150;
  const words = new Set();
  while (words.size < VOCABULARY) {
    const n = 2 + Math.floor(rand() * 3);
    words.add(
      Array.from({ length: n }, () => SYLLABLES[Math.floor(rand() * SYLLABLES.length)]).join(''),
    );
  }
  const vocabulary = [...words];
  const topics = Array.from({ length: TOPICS }, () =>
    Array.from({ length: TOPIC_WORDS }, () => vocabulary[Math.floor(rand() * VOCABULARY)]),
  );
  const background = zipf(VOCABULARY, 1.1);
  const inTopic = zipf(TOPIC_WORDS, 1);
  const topicOf = zipf(TOPICS, 0.5);
  const word = (rand, main, second) => {
    const x = rand();
    if (x < 0.15) return vocabulary[background(rand)];
    const topic = second !== undefined && x > 0.8 ? second : main;
    return topics[topic][inTopic(rand)];
  };
  return {
    name: 'topics',
    /** A ticket of `n` words. */
    text(rand, n) {
      const main = topicOf(rand);
      const second = rand() < 0.3 ? topicOf(rand) : undefined;
      return Array.from({ length: n }, () => word(rand, main, second)).join(' ');
    },
    /** A query: a few words of one topic. */
    query(rand) {
      const main = topicOf(rand);
      return Array.from({ length: 3 + Math.floor(rand() * 4) }, () => word(rand, main)).join(' ');
    },
  };
}

function uniformCorpus() {
  const text = (rand, n) =>
    Array.from({ length: n }, () => UNIFORM_WORDS[Math.floor(rand() * UNIFORM_WORDS.length)]).join(
      ' ',
    );
  return { name: 'uniform', text, query: (rand) => text(rand, 3) };
}

/** The corpus named (`topics` or `uniform`), deterministic for a seed. */
function ticketCorpus(name = 'topics', seed = 2026) {
  if (name === 'topics') return topicCorpus(seed);
  if (name === 'uniform') return uniformCorpus();
  throw new Error(`BENCH_SEM_CORPUS must be 'topics' or 'uniform', got '${name}'`);
}

module.exports = { ticketCorpus, prng };
