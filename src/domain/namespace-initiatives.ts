// The capacity budgets assign namespaces to initiatives; a workload's attribution consults that
// assignment. The port between the two flows is owned by neither, so that neither imports the other.

/**
 * Initiatives the capacity budgets assign to namespaces (capacity.yaml `namespaces`), per
 * organization. Consulted after the object's and the Namespace's labels, before the namespace name.
 */
export interface NamespaceInitiatives {
  initiativeOf(organizationId: string, namespace: string): string | undefined;
}
