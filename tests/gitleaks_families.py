"""Secrets of every rule family of gitleaks' default configuration, made here from each rule's facts.

gitleaks (github.com/gitleaks/gitleaks, MIT) is the public reference for which secrets a scanner must find:
each of its rules says a token's prefix, alphabet and length, or, for a "semi-generic" rule, the service name
that stands before a value of a given shape. This file states those facts, one family a line, and makes a
fresh secret of each from a fixed seed; nothing of gitleaks' own examples is copied. A family whose rule only
reads a file's name (`pkcs12-file`) has no text to plant and is left out.

A template is literal text with `{<alphabet>:<length>}` holes (the alphabets below) and `{uuid}` / `{UUID}`;
`name` is the identifier a semi-generic rule needs before the value (empty for a token that carries its own
prefix): the names vendors' configurations use, none of them holding a word (`token`, `secret`, `auth`) that
would redact the value by its name alone, save where the rule needs one (Snyk's): the value's format, or the
service's name, must do it.

gitleaks' contributors keep proposing rules (its open pull requests, and closed ones for services other
scanners read): `PROPOSED_TOKENS`, `PROPOSED_NAMED` and `PROPOSED_IN_CONTEXT` state those the same way, from
the same facts. Left out of them: a MongoDB Atlas public key (eight lowercase letters and digits after its
name) and a Mercado Pago sandbox public key (`TEST-` and a UUID), public identifiers a word or a test run's id
can look like, and the proposals that only repeat a rule stated above under another id.
"""

from __future__ import annotations

import random
import re
import string
from dataclasses import dataclass

ALPHABETS = {
    "A": string.ascii_letters + string.digits,
    "a": string.ascii_lowercase + string.digits,
    "h": "0123456789abcdef",
    "H": "0123456789ABCDEF",
    "x": "0123456789abcdefABCDEF",
    "U": string.ascii_uppercase + string.digits,
    "d": string.digits,
    "L": string.ascii_letters,
    "u": string.ascii_letters + string.digits + "-_",
    "b": string.ascii_letters + string.digits + "+/",
    "g": "0123456789abcdefgh",  # Flutterwave's a-h
    "c": "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L",  # bech32 (age)
    "2": "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567",  # AWS key ids' base32
    "5": "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz",  # base58 (Resend)
    "j": string.ascii_lowercase + string.digits + "!@#$%^&*(-_=+)",  # Django's generated secret keys
}


@dataclass(frozen=True)
class Family:
    rule: str
    template: str
    #: the identifier before the value (semi-generic rules), empty when the token names itself
    name: str = ""
    #: the text the rule reads the value in (`%s` stands for it), empty when the value stands anywhere
    context: str = ""


#: (rule id, template) of the rules whose token carries its own prefix or structure
TOKENS = (
    Family("1password-secret-key", "A3-{U:6}-{U:11}-{U:5}-{U:5}-{U:5}"),
    Family("1password-service-account-token", "ops_eyJ{b:280}"),
    Family("adobe-client-secret", "p8e-{A:32}"),
    Family("age-secret-key", "AGE-SECRET-KEY-1{c:58}"),
    Family("airtable-personnal-access-token", "pat{A:14}.{h:64}"),
    Family("alibaba-access-key-id", "LTAI{A:20}"),
    Family("anthropic-admin-api-key", "sk-ant-admin01-{u:93}AA"),
    Family("anthropic-api-key", "sk-ant-api03-{u:93}AA"),
    Family("artifactory-api-key", "AKCp{A:69}"),
    Family("artifactory-reference-token", "cmVmd{A:59}"),
    Family("atlassian-api-token", "ATATT3{u:186}"),
    Family("authress-service-client-access-key", "sc_{a:12}.{a:5}.acc_{a:20}.{u:48}"),
    Family("aws-access-token", "AKIA{2:16}"),
    Family("aws-access-token", "ASIA{2:16}"),
    Family("aws-amazon-bedrock-api-key-long-lived", "ABSK{b:132}"),
    Family("aws-amazon-bedrock-api-key-short-lived", "bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t{b:180}"),
    Family("azure-ad-client-secret", "{A:3}8Q~{u:34}"),
    Family("clickhouse-cloud-api-secret-key", "4b1d{A:38}"),
    Family("clojars-api-token", "CLOJARS_{a:60}"),
    Family("clojars-api-token", "CLOJARS_{A:60}"),  # the rule reads any case
    Family("cloudflare-origin-ca-key", "v1.0-{h:24}-{h:146}"),
    Family("databricks-api-token", "dapi{h:32}"),
    Family("digitalocean-access-token", "doo_v1_{h:64}"),
    Family("digitalocean-pat", "dop_v1_{h:64}"),
    Family("digitalocean-refresh-token", "dor_v1_{h:64}"),
    Family("doppler-api-token", "dp.pt.{A:43}"),
    Family("duffel-api-token", "duffel_test_{u:43}"),
    Family("dynatrace-api-token", "dt0c01.{U:24}.{A:64}"),
    Family("easypost-api-token", "EZAK{A:54}"),
    Family("easypost-test-api-token", "EZTK{A:54}"),
    Family("facebook-access-token", "{d:15}|{u:32}"),
    Family("facebook-page-access-token", "EAAM{A:160}"),
    Family("flutterwave-encryption-key", "FLWSECK_TEST-{g:12}"),
    Family("flutterwave-public-key", "FLWPUBK_TEST-{g:32}-X"),
    Family("flutterwave-secret-key", "FLWSECK_TEST-{g:32}-X"),
    Family("flyio-access-token", "fm2_{b:240}"),
    Family("frameio-api-token", "fio-u-{u:64}"),
    Family("gcp-api-key", "AIza{u:35}"),
    Family("github-app-token", "ghs_{A:36}"),
    Family("github-fine-grained-pat", "github_pat_{A:22}_{A:59}"),
    Family("github-oauth", "gho_{A:36}"),
    Family("github-pat", "ghp_{A:36}"),
    Family("github-refresh-token", "ghr_{A:36}"),
    Family("gitlab-cicd-job-token", "glcbt-{h:2}_{u:20}"),
    Family("gitlab-deploy-token", "gldt-{u:20}"),
    Family("gitlab-feature-flag-client-token", "glffct-{u:20}"),
    Family("gitlab-feed-token", "glft-{u:20}"),
    Family("gitlab-incoming-mail-token", "glimt-{u:25}"),
    Family("gitlab-kubernetes-agent-token", "glagent-{u:50}"),
    Family("gitlab-oauth-app-secret", "gloas-{u:64}"),
    Family("gitlab-pat", "glpat-{u:20}"),
    Family("gitlab-pat-routable", "glpat-{u:36}.01{a:7}"),
    Family("gitlab-ptt", "glptt-{h:40}"),
    Family("gitlab-rrt", "GR1348941{u:20}"),
    Family("gitlab-runner-authentication-token", "glrt-{u:20}"),
    Family("gitlab-runner-authentication-token-routable", "glrt-t3_{u:36}.01{a:7}"),
    Family("gitlab-scim-token", "glsoat-{u:20}"),
    Family("gitlab-session-cookie", "_gitlab_session={a:32}"),
    Family("grafana-api-key", "eyJrIjoi{A:88}"),
    Family("grafana-cloud-api-token", "glc_{b:120}"),
    Family("grafana-service-account-token", "glsa_{A:32}_{h:8}"),
    Family("harness-api-key", "sat.{u:22}.{A:24}.{A:20}"),
    Family("hashicorp-tf-api-token", "{a:14}.atlasv1.{u:67}"),
    Family("heroku-api-key-v2", "HRKU-AA{u:58}"),
    Family("huggingface-access-token", "hf_{L:34}"),
    Family("huggingface-organization-api-token", "api_org_{L:34}"),
    Family("infracost-api-token", "ico-{A:32}"),
    Family("intra42-client-secret", "s-s4t2af-{h:64}"),
    Family("intra42-client-secret", "s-s4t2ud-{x:64}"),  # the rule reads hex in any case
    Family("jwt", "eyJ{A:36}.eyJ{u:80}.{u:43}"),
    Family("jwt-base64", "ZXlKaGJHY2lPaU{b:160}"),
    Family("linear-api-key", "lin_api_{A:40}"),
    Family("maxmind-license-key", "{A:6}_{A:29}_mmk"),
    Family(
        "microsoft-teams-webhook",
        "https://{a:8}.webhook.office.com/webhookb2/{uuid}@{uuid}/IncomingWebhook/{a:32}/{uuid}",
    ),
    Family("notion-api-token", "ntn_{d:11}{A:35}"),
    Family("npm-access-token", "npm_{A:36}"),
    Family("octopus-deploy-api-key", "API-{U:26}"),
    Family("openai-api-key", "sk-proj-{u:74}T3BlbkFJ{u:73}{A:1}"),
    Family("openai-api-key", "sk-{A:20}T3BlbkFJ{A:20}"),
    Family("openshift-user-token", "sha256~{u:43}"),
    Family("perplexity-api-key", "pplx-{A:48}"),
    Family("planetscale-api-token", "pscale_tkn_{u:43}"),
    Family("planetscale-oauth-token", "pscale_oauth_{u:43}"),
    Family("planetscale-password", "pscale_pw_{u:43}"),
    Family("postman-api-token", "PMAK-{h:24}-{h:34}"),
    Family("prefect-api-token", "pnu_{A:36}"),
    Family("private-key", "-----BEGIN EC PRIVATE KEY-----\n{b:64}\n{b:56}==\n-----END EC PRIVATE KEY-----"),
    Family("pulumi-api-token", "pul-{h:40}"),
    Family("pypi-upload-token", "pypi-AgEIcHlwaS5vcmc{u:140}"),
    Family("readme-api-token", "rdme_{a:70}"),
    Family("rubygems-api-token", "rubygems_{h:48}"),
    Family("scalingo-api-token", "tk-us-{u:48}"),
    Family("sendgrid-api-token", "SG.{u:22}.{u:43}"),
    Family("sendinblue-api-token", "xkeysib-{h:64}-{A:16}"),
    Family("sentry-org-token", "sntrys_eyJpYXQiO{A:60}LCJyZWdpb25fdXJs{A:60}_{b:43}"),
    Family("sentry-user-token", "sntryu_{h:64}"),
    Family("settlemint-application-access-token", "sm_aat_{A:16}"),
    Family("settlemint-personal-access-token", "sm_pat_{A:16}"),
    Family("settlemint-service-access-token", "sm_sat_{A:16}"),
    Family("shippo-api-token", "shippo_live_{h:40}"),
    Family("shopify-access-token", "shpat_{h:32}"),
    Family("shopify-custom-access-token", "shpca_{h:32}"),
    Family("shopify-private-app-access-token", "shppa_{h:32}"),
    Family("shopify-shared-secret", "shpss_{h:32}"),
    Family("sidekiq-sensitive-url", "https://{h:8}:{h:8}@gems.contribsys.com/"),
    Family("slack-app-token", "xapp-1-A{U:10}-{d:13}-{h:64}"),
    Family("slack-bot-token", "xoxb-{d:12}-{d:13}-{A:24}"),
    Family("slack-config-access-token", "xoxe.xoxb-1-{U:164}"),
    Family("slack-config-refresh-token", "xoxe-1-{U:146}"),
    Family("slack-legacy-bot-token", "xoxb-{d:10}-{A:24}"),
    Family("slack-legacy-token", "xoxs-{d:10}-{d:11}-{d:12}-{h:64}"),
    Family("slack-legacy-workspace-token", "xoxr-{A:40}"),
    Family("slack-user-token", "xoxp-{d:12}-{d:12}-{d:13}-{h:32}"),
    Family("slack-webhook-url", "https://hooks.slack.com/services/T{U:8}/B{U:10}/{A:24}"),
    Family("sourcegraph-access-token", "sgp_{h:16}_{h:40}"),
    Family("square-access-token", "EAAA{u:60}"),
    Family("square-access-token", "sq0atp-{u:22}"),
    Family("stripe-access-token", "sk_live_{A:99}"),
    Family("stripe-access-token", "rk_prod_{A:24}"),
    Family("twilio-api-key", "SK{h:32}"),
    Family("vault-batch-token", "hvb.{u:160}"),
    Family("vault-service-token", "hvs.{u:96}"),
    Family("vault-service-token", "s.{A:24}"),
)

#: the rules of gitleaks' newer proposals (its open pull requests, and the closed ones whose services others
#: scan for): the same facts, kept apart so the default configuration's count stays readable
PROPOSED_TOKENS = (
    Family("adyen-api-key", "AQE{a:8}.{u:64}"),
    Family("adyen-client-key", "live_{A:34}"),
    Family("anthropic-oauth-refresh-token", "sk-ant-ort01-{u:95}"),
    Family("anthropic-oauth-token", "sk-ant-oat01-{u:95}"),
    Family("braintree-access-token", "access_token$production${a:16}"),
    Family("braintree-tokenization-key", "sandbox_{a:8}_{a:16}"),
    Family("castai-api-key", "castai_v1_{A:64}_{A:8}"),
    Family("chargebee-access-token", "test_{A:32}"),
    Family("chieftools-access-token", "cto_{A:40}"),
    Family("chieftools-pat", "ctp_{A:40}"),
    Family("chieftools-refresh-token", "ctr_{A:64}"),
    Family("claude-code-oauth-token", "sk-ant-oat01-{u:95}"),
    Family("claude-code-session-url", "https://claude.ai/code/session_{A:26}"),
    Family("datafactory-shir-token", "IR@{uuid}@adf-billing-{a:6}@weu@{b:43}="),
    Family("django-insecure-secret-key", "django-insecure-{j:50}"),
    Family("github-app-token", "ghs_{d:8}_eyJ{u:36}.eyJ{u:120}.{u:43}"),
    Family("gitlab-pat-routable-versioned", "glpat-{u:27}.01.{a:9}"),
    Family("groq-api-key", "gsk_{A:48}"),
    Family("langsmith-api-key", "lsv2_pt_{a:32}_{a:10}"),
    Family("langsmith-api-key", "lsv2_sk_{a:32}_{a:10}"),
    Family("mercadopago-access-token", "APP_USR-{d:16}-{d:6}-{h:32}-{d:9}"),
    Family("mercadopago-public-key", "APP_USR-{uuid}"),
    Family("midtrans-client-key", "Mid-client-{A:24}"),
    Family("midtrans-server-key", "SB-Mid-server-{A:24}"),
    Family("mongodb-atlas-service-account-token", "mdb_sa_sk_{u:40}"),
    Family("mongodb-connection-string", "mongodb+srv://orders:{A:24}@cluster0.{a:5}.mongodb.net/billing"),
    Family("onfido-live-api-token", "api_live.{u:11}.{u:32}"),
    Family("onfido-live-api-token", "api_live_us.{u:11}.{u:32}"),
    Family("openrouter-api-key", "sk-or-v1-{h:64}"),
    Family("paystack-public-key", "pk_live_{a:40}"),
    Family("paystack-secret-key", "sk_test_{a:40}"),
    Family("pinecone-api-key", "pcsk_{A:6}_{A:63}"),
    Family("private-key-non-pem-format", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ{b:600}"),
    Family("razorpay-key-id", "rzp_live_{A:14}"),
    Family("replicate-api-token", "r8_{A:40}"),
    Family("resend-api-key", "re_{5:8}_{5:24}"),
    Family("saladcloud-api-key", "salad_cloud_user_{A:49}"),
    Family("sealed-env-credential-token", "sealed_env_b_{h:4}_{u:88}"),
    Family("sealed-env-totp-otpauth-uri", "otpauth://totp/Acme:ops?secret={2:32}&issuer=Acme"),
    Family("sealed-env-unseal-token", "usl_{u:60}.{u:120}.{u:43}"),
    Family("segment-public-api-token", "sgp_{A:64}"),
    Family("supabase-service-key", "sbp_{h:40}"),
    Family("tailscale-key", "tskey-auth-{A:12}CNTRL-{A:33}"),
    Family("tailscale-key", "tskey-api-{A:12}CNTRL-{A:33}"),
    Family("xai-api-key", "xai-{A:80}"),
    Family("zapier-webhook", "https://hooks.zapier.com/hooks/catch/{d:8}/{a:7}/"),
)

#: the rules that need the service's name before the value: (rule id, value's template, name)
NAMED = (
    Family("adafruit-api-key", "{u:32}", "ADAFRUIT_IO"),
    Family("adobe-client-id", "{h:32}", "adobe_client_id"),
    Family("airtable-api-key", "key{A:14}", "airtable"),
    Family("algolia-api-key", "{h:32}", "ALGOLIA_ADMIN"),
    Family("alibaba-secret-key", "{A:30}", "ALIBABA_CLOUD_ACCESS"),
    Family("asana-client-id", "{d:16}", "asana_client_id"),
    Family("asana-client-secret", "{a:32}", "ASANA_CLIENT"),
    Family("atlassian-api-token", "{a:20}{h:4}", "JIRA_API"),
    Family("beamer-api-token", "b_{u:44}", "beamer"),
    Family("bitbucket-client-id", "{A:32}", "BITBUCKET_CLIENT_ID"),
    Family("bitbucket-client-secret", "{u:64}", "bitbucket_oauth"),
    Family("bittrex-access-key", "{h:32}", "bittrex"),
    Family("bittrex-secret-key", "{h:32}", "BITTREX_SEC"),
    Family("cisco-meraki-api-key", "{h:40}", "MERAKI_DASHBOARD"),
    Family("cloudflare-api-key", "{u:40}", "CLOUDFLARE_API"),
    Family("cloudflare-global-api-key", "{h:37}", "cloudflare_global"),
    Family("codecov-access-token", "{h:32}", "CODECOV"),
    Family("cohere-api-token", "{A:40}", "COHERE"),
    Family("coinbase-access-token", "{u:64}", "coinbase"),
    Family("confluent-access-token", "{U:16}", "confluent_cloud_api"),
    Family("confluent-secret-key", "{A:64}", "CONFLUENT_CLOUD"),
    Family("contentful-delivery-api-token", "{u:43}", "CONTENTFUL_DELIVERY"),
    Family("datadog-access-token", "{h:40}", "DATADOG_APP"),
    Family("defined-networking-api-token", "dnkey-{A:26}-{A:52}", "DNKEY"),
    Family("discord-api-token", "{h:64}", "discord_bot"),
    Family("discord-client-id", "{d:18}", "DISCORD_CLIENT_ID"),
    Family("discord-client-secret", "{u:32}", "discord_client"),
    Family("droneci-access-token", "{A:32}", "DRONECI"),
    Family("dropbox-api-token", "{a:15}", "dropbox_app"),
    Family("dropbox-long-lived-api-token", "{a:11}AAAAAAAAAA{u:43}", "DROPBOX"),
    Family("dropbox-short-lived-api-token", "sl.{u:135}", "dropbox"),
    Family("etsy-access-token", "{a:24}", "ETSY"),
    Family("facebook-secret", "{h:32}", "FACEBOOK_APP"),
    Family("fastly-api-token", "{u:32}", "FASTLY_API"),
    Family("finicity-api-token", "{h:32}", "finicity_app"),
    Family("finicity-client-secret", "{a:20}", "FINICITY_CLIENT"),
    Family("finnhub-access-token", "{a:20}", "finnhub"),
    Family("flickr-access-token", "{h:32}", "FLICKR"),
    Family("freshbooks-access-token", "{h:64}", "freshbooks"),
    Family("gitter-access-token", "{h:40}", "GITTER"),
    Family("gocardless-api-token", "live_{u:40}", "GOCARDLESS"),
    Family("heroku-api-key", "{uuid}", "HEROKU_API"),
    Family("hubspot-api-key", "{UUID}", "hubspot"),
    Family("intercom-api-key", "dG9r{u:56}", "INTERCOM"),
    Family("jfrog-api-key", "{A:73}", "JFROG"),
    Family("jfrog-identity-token", "{a:64}", "artifactory_identity"),
    Family("kraken-access-token", "{b:88}", "KRAKEN_PRIVATE"),
    Family("kucoin-access-token", "{h:24}", "KUCOIN"),
    Family("kucoin-secret-key", "{uuid}", "kucoin_api_sec"),
    Family("launchdarkly-access-token", "api-{uuid}", "LAUNCHDARKLY"),
    Family("linear-client-secret", "{h:32}", "LINEAR_CLIENT"),
    Family("linkedin-client-id", "{a:14}", "linkedin_client_id"),
    Family("linkedin-client-secret", "{A:16}", "LINKEDIN_CLIENT"),
    Family("lob-api-key", "live_{h:35}", "LOB"),
    Family("lob-pub-api-key", "test_pub_{h:31}", "lob"),
    Family("looker-client-id", "{A:20}", "LOOKER_CLIENT_ID"),
    Family("looker-client-secret", "{A:24}", "looker_client"),
    Family("mailchimp-api-key", "{h:32}-us21", "MAILCHIMP"),
    Family("mailgun-private-api-token", "key-{h:32}", "MAILGUN"),
    Family("mailgun-pub-key", "pubkey-{h:32}", "mailgun_public"),
    Family("mailgun-signing-key", "{h:32}-{h:8}-{h:8}", "MAILGUN_WEBHOOK_SIGNING"),
    Family("mapbox-api-token", "pk.eyJ{A:57}.{A:22}", "MAPBOX"),
    Family("mattermost-access-token", "{a:26}", "mattermost"),
    Family("messagebird-api-token", "{A:25}", "MESSAGEBIRD"),
    Family("messagebird-client-id", "{uuid}", "message_bird_client_id"),
    Family("netlify-access-token", "nfp_{A:40}", "NETLIFY"),
    Family("new-relic-browser-api-token", "NRJS-{h:19}", "NEW_RELIC_BROWSER"),
    Family("new-relic-insert-key", "NRII-{A:32}", "newrelic_insert"),
    Family("new-relic-user-api-id", "{a:64}", "NEW_RELIC_USER"),
    Family("new-relic-user-api-key", "NRAK-{U:27}", "new_relic"),
    Family("nytimes-access-token", "{A:32}", "NYTIMES"),
    Family("okta-access-token", "00{u:40}", "OKTA_API"),
    Family("plaid-api-token", "access-production-{uuid}", "PLAID"),
    Family("plaid-client-id", "{h:24}", "PLAID_CLIENT_ID"),
    Family("plaid-secret-key", "{h:30}", "plaid_sandbox"),
    Family("privateai-api-token", "{h:32}", "PRIVATE_AI"),
    Family("rapidapi-access-token", "{u:50}", "X_RAPIDAPI"),
    Family("sendbird-access-id", "{UUID}", "SENDBIRD_APP_ID"),
    Family("sendbird-access-token", "{h:40}", "sendbird_api"),
    Family("sentry-access-token", "{h:64}", "SENTRY"),
    Family("sidekiq-secret", "{h:8}:{h:8}", "BUNDLE_ENTERPRISE__CONTRIBSYS__COM"),
    Family("snyk-api-token", "{uuid}", "SNYK_TOKEN"),
    Family("sonar-api-token", "squ_{h:40}", "sonar.login"),
    Family("squarespace-access-token", "{uuid}", "SQUARESPACE_API"),
    Family("sumologic-access-id", "su{A:12}", "SUMO_ACCESS_ID"),
    Family("sumologic-access-token", "{A:64}", "SUMO_ACCESS"),
    Family("telegram-bot-api-token", "{d:10}:AA{u:33}", "TELEGRAM_BOT"),
    Family("travisci-access-token", "{A:22}", "TRAVIS_API"),
    Family("twitch-api-token", "{a:30}", "TWITCH_CLIENT"),
    Family("twitter-access-secret", "{A:45}", "TWITTER_ACCESS"),
    Family("twitter-access-token", "{d:19}-{A:31}", "twitter_access"),
    Family("twitter-api-key", "{A:25}", "TWITTER_CONSUMER"),
    Family("twitter-api-secret", "{A:50}", "twitter_consumer_sec"),
    Family("twitter-bearer-token", "AAAAAAAAAAAAAAAAAAAAAA{A:90}", "TWITTER_BEARER"),
    Family("typeform-api-token", "tfp_{u:59}", "TYPEFORM"),
    Family("yandex-access-token", "t1.{u:40}.{u:86}", "YANDEX_OAUTH"),
    Family("yandex-api-key", "AQVN{u:36}", "yandex"),
    Family("yandex-aws-access-token", "YC{u:38}", "YANDEX_STATIC"),
    Family("zendesk-secret-key", "{A:40}", "ZENDESK_API"),
)

#: the semi-generic rules of gitleaks' newer proposals: (rule id, value's template, name)
PROPOSED_NAMED = (
    Family("atlassian-private-access-token", "{a:24}", "CONFLUENCE_PAT"),
    Family("auth0-client-id", "{uuid}", "AUTH0_CLIENT_ID"),
    Family("auth0-client-secret", "{a:40}", "auth0_client"),
    Family("aws-secret-key", "{b:40}", "aws_secret_access_key"),
    Family("azure-batch-account-key", "{b:86}==", "AZURE_BATCH_KEY"),
    Family("azure-container-registry-password", "{b:43}=", "ACR_PASSWORD"),
    Family("azure-devops-pat", "{a:52}", "AZURE_DEVOPS_PAT"),
    Family("azure-devops-personal-access-token", "{A:52}", "azdo"),
    Family("azure-function-key", "{u:54}==", "x-functions-key"),
    Family("azure-maps-subscription-key", "{u:43}", "AZURE_MAPS_KEY"),
    Family("azure-search-api-key", "{h:32}", "AZURE_SEARCH_KEY"),
    Family("azure-storage-account-key", "{b:86}==", "AZURE_STORAGE_ACCOUNT_KEY"),
    Family("database-password", "{A:20}", "DB_PASSWORD"),
    Family("mongodb-atlas-private-key", "{uuid}", "MONGODB_ATLAS_PRIVATE"),
    Family("plivo-auth-id", "MA{A:18}", "PLIVO_AUTH_ID"),
    Family("razorpay-key-secret", "{A:24}", "RAZORPAY"),
    Family("sealed-env-master-key", "{h:64}", "SEALED_ENV_KEY"),
    Family("sealed-env-signing-key", "{h:64}", "SEALED_ENV_SIGNING_KEY"),
    Family("sealed-env-totp-secret", "{2:32}", "SEALED_ENV_TOTP_SECRET"),
    Family("zhipu-api-key", "{h:32}.{A:16}", "ZHIPU"),
    Family("zhipu-api-key", "{h:32}.{A:16}", "bigmodel"),
)

#: rules that read a value in its own context (a command line, a manifest, a config file's element)
IN_CONTEXT = (
    Family(
        "curl-auth-header",
        "{u:40}",
        context='curl -s -H "Authorization: Bearer %s" https://api.example.com/v1/items',
    ),
    Family("curl-auth-user", "{A:20}", context="curl --user deploy:%s https://ci.example.com/api/json"),
    Family("freemius-secret-key", "sk_{A:29}", context="'secret_key' => '%s'"),
    Family("generic-api-key", "{A:32}", context='client_credential = "%s"'),
    Family("hashicorp-tf-password", "{A:16}", context='administrator_login_password = "%s"'),
    Family("kubernetes-secret-yaml", "{b:32}", context="kind: Secret\ndata:\n  db-pass: %s"),
    Family("nuget-config-password", "{A:18}", context='<add key="ClearTextPassword" value="%s" />'),
)

#: the proposed rules that read a value in its own context
PROPOSED_IN_CONTEXT = (
    Family(
        "ansible-vault-token",
        "{h:64}",
        context="$ANSIBLE_VAULT;1.1;AES256\n6338363633343135393838623235393732383666373736376434356438643339\n%s",
    ),
    Family(
        "azure-app-configuration-connection-string",
        "{b:43}=",
        context="Endpoint=https://billing.azconfig.io;Id=k9Xw-l0-s0:Qn4b;Secret=%s",
    ),
    Family(
        "azure-cosmos-db-connection-string",
        "{b:86}==",
        context="AccountEndpoint=https://billing.documents.azure.com:443/;AccountKey=%s;",
    ),
    Family(
        "azure-event-hub-connection-string",
        "{b:43}=",
        context="Endpoint=sb://billing.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey=%s",
    ),
    Family(
        "azure-iot-hub-connection-string",
        "{b:43}=",
        context="HostName=billing.azure-devices.net;SharedAccessKeyName=iothubowner;SharedAccessKey=%s",
    ),
    Family(
        "azure-signalr-connection-string",
        "{b:43}=",
        context="Endpoint=https://billing.service.signalr.net;AccessKey=%s;Version=1.0;",
    ),
    Family(
        "azure-sql-connection-string",
        "{A:20}",
        context="Server=tcp:billing.database.windows.net,1433;Database=orders;User ID=app;Password=%s;",
    ),
    Family(
        "azure-storage-connection-string",
        "{b:86}==",
        context="DefaultEndpointsProtocol=https;AccountName=billing;AccountKey=%s;EndpointSuffix=core.windows.net",
    ),
    Family(
        "azure-network-credential",
        "{A:16}",
        context='var credential = new NetworkCredential("svc_build", "%s", "corp");',
    ),
    Family(
        "azure-network-credential-dotnet",
        "{A:16}",
        context='$credential = new-object System.Net.NetworkCredential("svc_build", "%s")',
    ),
    Family(
        "azure-network-credential-schtasks",
        "{A:16}",
        context="schtasks /create /tn nightly /ru corp\\svc_build /rp %s /tr run.cmd",
    ),
    Family("azure-password-value-string", "{b:42}==", context='<setting name="Primary" value="%s" />'),
    Family(
        "azure-password-machinekey", "{H:64}", context='<machineKey validationKey="%s" validation="SHA1" />'
    ),
    Family(
        "azure-sas-token",
        "{b:43}=",
        context="https://billing.blob.core.windows.net/c?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-12-01&sig=%s",
    ),
    Family(
        "gcp-service-account-key",
        "{b:64}",
        context='{"type": "service_account", "private_key": '
        '"-----BEGIN PRIVATE KEY-----\\n%s\\n-----END PRIVATE KEY-----\\n"}',
    ),
    Family("kubernetes-secret-stringdata-yaml", "{A:24}", context="kind: Secret\nstringData:\n  db-pass: %s"),
    Family(
        "mcp-server-credential", "{A:40}", context='{"mcpServers": {"linear": {"env": {"LINEAR_PAT": "%s"}}}}'
    ),
    Family(
        "mssql-database-credentials", "{A:20}", context="Server=db01;Database=orders;User Id=app;Password=%s;"
    ),
    Family("openstack_rc_password", "{A:20}", context="export OS_PASSWORD=%s"),
    Family(
        "python-jose-jwt-encode-hardcodedkey",
        "{A:32}",
        context='    token = jwt.encode({"sub": user_id}, "%s", algorithm="HS256")',
    ),
    Family("python-jose-jwt-decode-hardcodedkey", "{A:32}", context='    claims = jwt.decode(token, "%s")'),
    Family("spring-placeholder-with-secret", "{A:32}", context="    api-key: ${PAYMENTS_API_KEY:%s}"),
    Family("sshpass", "{A:16}", context="sshpass -p '%s' ssh deploy@10.0.0.4"),
)

_HOLE = re.compile(r"\{([A-Za-z0-9]):(\d+)\}|\{(uuid|UUID)\}")


def _made(template: str, rng: random.Random) -> tuple[str, tuple[str, ...]]:
    """The value of `template`, and the runs its holes were filled with."""
    runs: list[str] = []

    def hole(match: re.Match[str]) -> str:
        uuid = match.group(3)
        if uuid:
            made = "-".join("".join(rng.choice(ALPHABETS["h"]) for _ in range(n)) for n in (8, 4, 4, 4, 12))
            made = made.upper() if uuid == "UUID" else made
        else:
            made = "".join(rng.choice(ALPHABETS[match.group(1)]) for _ in range(int(match.group(2))))
        runs.append(made)
        return made

    return _HOLE.sub(hole, template), tuple(runs)


@dataclass(frozen=True)
class Secret:
    rule: str
    #: what must not come out
    value: str
    #: the identifier that names it (semi-generic rules), empty otherwise
    name: str
    #: the text the rule reads the value in (`IN_CONTEXT`), `%s` for the value; empty for the others
    context: str = ""
    #: the generated runs of the value (a hole each): none of them may come out either
    runs: tuple[str, ...] = ()


def secrets(seed: int = 20261127) -> list[Secret]:
    """A fresh secret of every family, the same ones for the same seed."""
    rng = random.Random(seed)
    found = []
    for family in (*TOKENS, *NAMED, *IN_CONTEXT):
        value, runs = _made(family.template, rng)
        found.append(Secret(family.rule, value, family.name, family.context, runs))
    # the proposals' secrets come from a seed of their own, so the default configuration's stay as they were
    rng = random.Random(seed + 1)
    for family in (*PROPOSED_TOKENS, *PROPOSED_NAMED, *PROPOSED_IN_CONTEXT):
        value, runs = _made(family.template, rng)
        found.append(Secret(family.rule, value, family.name, family.context, runs))
    return found
