export function renderModule(): string;
export function shippedText(source: string): string;
