// The write-verb check /cypher runs before it looks at the backend: a write verb is found as a keyword,
// never inside a string, a comment, a backticked name, a property, a label or a map key.

import { describe, expect, it } from 'vitest';

import { cypherWriteVerb } from '../../hub/src/core/cypher-verbs.js';

describe('cypherWriteVerb', () => {
  it.each([
    ["CREATE (n:Entity {name: 'mallory'}) RETURN n", 'CREATE'],
    ["create (n)", 'CREATE'],
    ["MERGE (n:Entity {name: 'x'})", 'MERGE'],
    ["MATCH (n) SET n.name = 'Eve'", 'SET'],
    ['MATCH (n) DETACH DELETE n', 'DETACH'],
    ['MATCH (n) DELETE n', 'DELETE'],
    ['MATCH (n) REMOVE n.type', 'REMOVE'],
    ['MATCH (n) WITH n\nCREATE (m)', 'CREATE'],
    ["MATCH (n) /* read */ SET n.x = 1", 'SET'],
    ['DROP INDEX foo', 'DROP'],
    ['MATCH (n)\tdelete\tn', 'DELETE'],
  ])('finds the write verb in %j', (cypher, verb) => {
    expect(cypherWriteVerb(cypher)).toBe(verb);
  });

  it.each([
    'MATCH (n) RETURN n',
    "MATCH (n) WHERE n.name = 'CREATE (x)' RETURN n",
    'MATCH (n) WHERE n.name = "set me; DELETE" RETURN n',
    "MATCH (n) WHERE n.name = 'it\\'s CREATE' RETURN n",
    'MATCH (n) // CREATE (x)\nRETURN n',
    'MATCH (n) /* MERGE\n DELETE */ RETURN n',
    'MATCH (n) RETURN n.`create`, n.set, n.remove',
    'MATCH (n:Merge) RETURN n',
    'MATCH (n) RETURN {create: 1, delete: 2}',
    'MATCH (n) WHERE n.x = $set RETURN n',
    'MATCH (created)-[:reset]->(deleted) RETURN created, deleted, n.offset',
    'MATCH (n) RETURN `CREATE` ',
  ])('finds no write verb in %j', (cypher) => {
    expect(cypherWriteVerb(cypher)).toBeNull();
  });
});
