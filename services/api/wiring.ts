/** A route plugin's service was not handed to it: the composition is wrong, and the service must not start. */
export class MissingServiceError extends Error {
  readonly code = 'SERP_API_MISSING_SERVICE';
  constructor(routes: string, service: string) {
    super(
      `${routes}: no ${service} was given to the api; compose it with the others (services/compose/application.ts) instead of serving these routes as 404s`,
    );
    this.name = 'MissingServiceError';
  }
}

/** `service`, or a MissingServiceError at start-up: a wiring mistake must never show up as routes that answer 404. */
export const wired = <T>(service: T | undefined, routes: string, name: string): T => {
  if (service === undefined || service === null) throw new MissingServiceError(routes, name);
  return service;
};
