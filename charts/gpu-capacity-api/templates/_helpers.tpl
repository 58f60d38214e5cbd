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
{{- if and .Values.persistence.enabled (gt (int .Values.replicaCount) 1) }}
{{- fail "replicaCount > 1 with persistence.enabled=true would put two writers on one SQLite file: keep replicaCount=1, or set persistence.enabled=false (each replica then keeps its own index in an emptyDir)" }}
{{- end }}
{{- $delay := 5 }}
{{- if hasKey .Values.config "shutdown_delay_seconds" }}{{ $delay = int .Values.config.shutdown_delay_seconds }}{{ end }}
{{- $grace := 10 }}
{{- if hasKey .Values.config "shutdown_grace_seconds" }}{{ $grace = int .Values.config.shutdown_grace_seconds }}{{ end }}
{{- if lt (int .Values.terminationGracePeriodSeconds) (add $delay $grace 5) }}
{{- fail (printf "terminationGracePeriodSeconds (%d) must be at least config.shutdown_delay_seconds + config.shutdown_grace_seconds + 5 = %d, or the pod is killed while draining" (int .Values.terminationGracePeriodSeconds) (add $delay $grace 5)) }}
{{- end }}
{{- end }}
