{{/* Chart name, at most 63 characters (a DNS label). */}}
{{- define "gpu-capacity-api.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Fully qualified app name, at most 63 characters. A release name that already contains the chart name
is used as it is (release "gpu-capacity-api" -> "gpu-capacity-api").
*/}}
{{- define "gpu-capacity-api.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Chart name and version, for the helm.sh/chart label (never in a selector). */}}
{{- define "gpu-capacity-api.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels of every object. */}}
{{- define "gpu-capacity-api.labels" -}}
helm.sh/chart: {{ include "gpu-capacity-api.chart" . }}
{{ include "gpu-capacity-api.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: gpu-capacity-api
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Selector labels: stable across upgrades, so never the chart or app version. */}}
{{- define "gpu-capacity-api.selectorLabels" -}}
app.kubernetes.io/name: {{ include "gpu-capacity-api.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Name of the ServiceAccount to use. */}}
{{- define "gpu-capacity-api.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "gpu-capacity-api.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The image reference: repository:tag, or repository@digest when a digest is set. */}}
{{- define "gpu-capacity-api.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}
{{- end }}

{{/* Name of the API token Secret: the operator's, or the one the chart creates. */}}
{{- define "gpu-capacity-api.apiTokensSecretName" -}}
{{- .Values.apiTokens.existingSecret | default (printf "%s-api-tokens" (include "gpu-capacity-api.fullname" .)) }}
{{- end }}

{{/* Name of the PersistentVolumeClaim of the index: the operator's, or the one the chart creates. */}}
{{- define "gpu-capacity-api.pvcName" -}}
{{- .Values.persistence.existingClaim | default (printf "%s-index" (include "gpu-capacity-api.fullname" .)) }}
{{- end }}

{{/* Name of the admin Service: the full name cut to leave room for "-admin" within a DNS label's 63 characters. */}}
{{- define "gpu-capacity-api.adminServiceName" -}}
{{- printf "%s-admin" (include "gpu-capacity-api.fullname" . | trunc 57 | trimSuffix "-") }}
{{- end }}

{{/* Name of the ClusterRole (and its binding) allowed to read /metrics. */}}
{{- define "gpu-capacity-api.metricsReaderName" -}}
{{- printf "%s-metrics-reader" (include "gpu-capacity-api.fullname" .) }}
{{- end }}

{{/* Name of the ServiceAccount whose token the monitors send when no bearerTokenFile is used. */}}
{{- define "gpu-capacity-api.metricsScraperName" -}}
{{- printf "%s-metrics-scraper" (include "gpu-capacity-api.fullname" .) }}
{{- end }}

{{/*
"true" when a monitor sends a token from a Secret (the PodMonitor always, the ServiceMonitor without
bearerTokenFile), else empty.
*/}}
{{- define "gpu-capacity-api.monitorNeedsTokenSecret" -}}
{{- if or .Values.podMonitor.enabled (and .Values.serviceMonitor.enabled (not .Values.serviceMonitor.bearerTokenFile)) }}true{{ end }}
{{- end }}

{{/* "true" when the chart creates the scraper ServiceAccount and its token Secret, else empty. */}}
{{- define "gpu-capacity-api.createMetricsScraper" -}}
{{- if and (include "gpu-capacity-api.monitorNeedsTokenSecret" .) (not .Values.metricsScraper.existingSecret) }}true{{ end }}
{{- end }}

{{/* The Secret and key holding the token the monitors send: the operator's, or the scraper's. */}}
{{- define "gpu-capacity-api.metricsTokenSecret" -}}
{{- if .Values.metricsScraper.existingSecret -}}
name: {{ .Values.metricsScraper.existingSecret }}
key: {{ .Values.metricsScraper.existingSecretKey }}
{{- else -}}
name: {{ include "gpu-capacity-api.metricsScraperName" . }}-token
key: token
{{- end }}
{{- end }}

{{/*
"true" when the index is in PostgreSQL (database.url or database.existingSecret), else empty: the HA
mode (many replicas, one elected writer per cluster, no PVC) against today's single pod on SQLite.
*/}}
{{- define "gpu-capacity-api.database" -}}
{{- if or .Values.database.url .Values.database.existingSecret }}true{{ end }}
{{- end }}

{{/* Number of pods: replicaCount when set, else 3 with a database and 1 on SQLite. */}}
{{- define "gpu-capacity-api.replicas" -}}
{{- if kindIs "invalid" .Values.replicaCount }}
{{- if include "gpu-capacity-api.database" . }}3{{ else }}1{{ end }}
{{- else }}
{{- int .Values.replicaCount }}
{{- end }}
{{- end }}

{{/* Name of the Secret the chart creates for database.url and database.readOnlyUrl. */}}
{{- define "gpu-capacity-api.databaseSecretName" -}}
{{- printf "%s-database" (include "gpu-capacity-api.fullname" .) }}
{{- end }}

{{/* Whether the PodDisruptionBudget is rendered: podDisruptionBudget.enabled when set, else on with a database. */}}
{{- define "gpu-capacity-api.pdbEnabled" -}}
{{- if kindIs "invalid" .Values.podDisruptionBudget.enabled }}
{{- include "gpu-capacity-api.database" . }}
{{- else if .Values.podDisruptionBudget.enabled }}true
{{- end }}
{{- end }}

{{/*
A `config` value as an environment variable value (docs/configuration.md): strings as they are, a list
of strings comma-separated, anything else (numbers, booleans, remote_clusters objects) as JSON.
*/}}
{{- define "gpu-capacity-api.envValue" -}}
{{- if kindIs "string" . }}
{{- . }}
{{- else if kindIs "slice" . }}
{{- $allStrings := true }}
{{- range . }}{{ if not (kindIs "string" .) }}{{ $allStrings = false }}{{ end }}{{ end }}
{{- if $allStrings }}{{ join "," . }}{{ else }}{{ toJson . }}{{ end }}
{{- else }}
{{- toJson . }}
{{- end }}
{{- end }}

{{/*
Checks across values that the schema cannot express; each fails the render with the fix.
*/}}
{{- define "gpu-capacity-api.validate" -}}
{{- if and (not .Values.apiTokens.enabled) (not .Values.jwt.jwksUrl) (not (hasKey .Values.config "jwks_file")) }}
{{- fail "gpu-capacity-api needs a credential source or it refuses to start: keep apiTokens.enabled=true, or set jwt.jwksUrl (with jwt.issuer and jwt.audience), or config.jwks_file" }}
{{- end }}
{{- if .Values.jwt.jwksUrl }}
{{- if or (not .Values.jwt.issuer) (not .Values.jwt.audience) }}
{{- fail "jwt.jwksUrl is set: jwt.issuer and jwt.audience are required too" }}
{{- end }}
{{- end }}
{{- if and .Values.jwt.jwksUrl (hasPrefix "http://" (lower .Values.jwt.jwksUrl)) (not (regexMatch "^http://(localhost|127(\\.[0-9]+){3}|\\[::1\\])(:[0-9]+)?(/|$)" (lower .Values.jwt.jwksUrl))) (ne (toString (get .Values.config "jwks_allow_http")) "true") }}
{{- fail "jwt.jwksUrl is plain http:// to a host that is not loopback: the service refuses it, since keys fetched in the clear can be replaced on the way, and with them every identity. Use https://, or on a network you trust set config.jwks_allow_http=true" }}
{{- end }}
{{- if and .Values.serviceMonitor.enabled (not .Values.adminService.enabled) }}
{{- fail "serviceMonitor.enabled=true selects the admin Service: keep adminService.enabled=true, or scrape the pods with podMonitor.enabled=true instead" }}
{{- end }}
{{- if and (include "gpu-capacity-api.createMetricsScraper" .) (not .Values.metricsReader.create) }}
{{- fail "the PodMonitor (or the ServiceMonitor without bearerTokenFile) sends the token of the chart's metrics-scraper ServiceAccount, which only metricsReader.create=true allows to read /metrics: keep it true, or name a Secret holding an allowed token in metricsScraper.existingSecret" }}
{{- end }}
{{- $database := include "gpu-capacity-api.database" . }}
{{- if and (not $database) .Values.persistence.enabled (gt (int (include "gpu-capacity-api.replicas" .)) 1) }}
{{- fail "replicaCount > 1 with persistence.enabled=true would put two writers on one SQLite file: keep replicaCount=1, or put the index in PostgreSQL (database.url or database.existingSecret; many replicas, one elected writer), or set persistence.enabled=false (each replica then keeps its own index in an emptyDir)" }}
{{- end }}
{{- if and (not $database) (or .Values.database.readOnlyUrl .Values.database.readOnlySecret) }}
{{- fail "database.readOnlyUrl or database.readOnlySecret is set without database.url or database.existingSecret: a read-only URL only serves reads beside a PostgreSQL primary" }}
{{- end }}
{{- $delay := 5 }}
{{- if hasKey .Values.config "shutdown_delay_seconds" }}{{ $delay = int .Values.config.shutdown_delay_seconds }}{{ end }}
{{- $grace := 10 }}
{{- if hasKey .Values.config "shutdown_grace_seconds" }}{{ $grace = int .Values.config.shutdown_grace_seconds }}{{ end }}
{{- if $database }}
{{- /* Kubernetes counts the grace period from before the preStop hook, so the hook's sleep is part of it. */}}
{{- $preStop := int .Values.ha.preStopSeconds }}
{{- if lt (int .Values.terminationGracePeriodSeconds) (add $preStop $delay $grace 5) }}
{{- fail (printf "terminationGracePeriodSeconds (%d) must be at least ha.preStopSeconds + config.shutdown_delay_seconds + config.shutdown_grace_seconds + 5 = %d, or the pod is killed while draining" (int .Values.terminationGracePeriodSeconds) (add $preStop $delay $grace 5)) }}
{{- end }}
{{- else if lt (int .Values.terminationGracePeriodSeconds) (add $delay $grace 5) }}
{{- fail (printf "terminationGracePeriodSeconds (%d) must be at least config.shutdown_delay_seconds + config.shutdown_grace_seconds + 5 = %d, or the pod is killed while draining" (int .Values.terminationGracePeriodSeconds) (add $delay $grace 5)) }}
{{- end }}
{{- end }}
