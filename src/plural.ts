/**
 * A count with its noun in the right number: "1 memory", "2 memories", "0 documents". Every line
 * memctx prints with a count goes through here, so none says "1 memories".
 */
export const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;
