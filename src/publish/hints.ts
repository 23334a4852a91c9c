/**
 * Duplicate hints: how many events went through a failed append, whose retry may therefore
 * have appended a second entry with the same event_id (the consumer's inbox absorbs it).
 * Counted per publisher and for the whole process (per isolate on Workers).
 */

let processTotal = 0;

export function addProcessDuplicateHints(count: number): void {
  processTotal += count;
}

/** Total over every publisher in this process. */
export function publisherDuplicateHintsTotal(): number {
  return processTotal;
}
