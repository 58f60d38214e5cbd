// Who decides a workload's initiative (the `initiative_source` setting). Its own module, like
// label-keys.ts, so that the settings' path through the indexers imports nothing of attribution.

/**
 * `labels`: whoever writes the object (its own label beats its Namespace's). `namespace`: whoever
 * administers the Namespace; an object's own label counts only where the Namespace allows it, so that
 * a Job author cannot charge another team's budget or hide their own use.
 */
export type InitiativeSource = 'labels' | 'namespace';

export const DEFAULT_INITIATIVE_SOURCE: InitiativeSource = 'labels';
