export function renderModule(): string;
