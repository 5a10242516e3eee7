/** Trailing slashes and fragments differ between parsers' URL cleaning without changing the target. */
export const normLink = (u: string): string => u.replace(/#.*$/, '').replace(/\/$/, '');
