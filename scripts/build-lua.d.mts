export function renderModule(): string;
export function shippedText(source: string): string;
export function expandIncludes(source: string, readFragment: (path: string) => string, name?: string): string;
export function scriptText(file: string): string;
export function scriptFiles(): string[];
