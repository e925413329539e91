"""Credential formats of services, second table: the formats the scanners' samples showed the first one missed.

Contract:
    :data:`FORMATS` is a tuple of :class:`~swebash_ai.safety.secret_rules.Rule`, run by
    :func:`~swebash_ai.safety.secrets.mask_secrets` after the first table's service rules and before its generic
    shapes. Each rule names its source: the rule ids of noseyparker (``np.*``), kingfisher, gitleaks and
    trufflehog whose published examples hold that format. The patterns are written here from those formats
    (prefix, alphabet, length), not copied from the scanners' rule files.

Why:
    The first table missed age secret keys, Vault and Doppler tokens, Discord bot tokens, Notion, Heroku,
    Cloudflare, Sentry, Supabase, Square, Atlassian and npm formats among others (issue 44). Prefixed formats
    cost nothing on ordinary text: they are tried only at the words that start with their prefix.

Pure: standard library only.
"""

from __future__ import annotations

import re
import string

from swebash_ai.safety.secret_rules import SCAN, TOKEN, Rule, mixed_parts, not_placeholder


def random_token(value: str) -> bool:
    """Random characters, not a name: a digit and an upper-case letter (``s.Z4bTMtngfLeQ18AqVoBBkUAOD1``, not
    ``s.total_cache_read_input_tokens`` in minified code)."""
    return any(c.isdigit() for c in value) and any(c.isupper() for c in value)


def mixed_case(value: str) -> bool:
    return any(c.isupper() for c in value) and any(c.islower() for c in value)


def curl_password(value: str) -> bool:
    """Not a placeholder (``[PASSWORD]``, ``<pass>``, ``$PASS``)."""
    return not value.startswith(("[", "<", "$", "%", "{{")) and not_placeholder(value)


def near_okta(text: str, m: re.Match[str]) -> bool:
    """Okta's API tokens are ``00`` and 40 characters: only taken for one where Okta is named nearby."""
    return _OKTA.search(text, max(0, m.start() - 300), m.start()) is not None


_OKTA = re.compile(r"(?<![A-Za-z])(?:okta|OKTA|Okta)")


__all__ = ["FORMATS"]

FORMATS: tuple[Rule, ...] = (
    # --- keys of tools ---
    Rule("age-secret-key", TOKEN, r"AGE-SECRET-KEY-1[0-9A-Z]{58}", "noseyparker np.age.2, gitleaks age-secret-key",
         ("AGE-SECRET-KEY-1",)),
    Rule("vault-token", TOKEN, r"hvr\.[A-Za-z0-9_\-]{24,}", "noseyparker np.hashicorp.6 (recovery tokens)", ("hvr.",)),
    Rule("vault-token", SCAN, r"{k}[\w\-]*[\"']?[ \t]*[:= ][ \t]*[\"'`]?(?P<v>[sbr]\.[A-Za-z0-9_\-]{24,})",
         "noseyparker np.hashicorp.1-3, gitleaks vault-service-token (tokens before Vault 1.10)", ("vault", "token"),
         lower=True, word_start=False, keywords=("token",), credible=random_token),
    Rule("doppler-token", TOKEN, r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9_.\-]{40,}",
         "noseyparker np.doppler.*, gitleaks doppler-api-token (with the environment part)", ("dp.",)),
    Rule("onepassword-token", TOKEN, r"ops_eyJ[A-Za-z0-9+/=_\-]{100,}", "gitleaks 1password-service-account-token",
         ("ops_eyJ",)),
    Rule("onepassword-secret-key", TOKEN, r"A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})(?:-[A-Z0-9]{5}){3}",
         "gitleaks 1password-secret-key", ("A3-",)),
    Rule("terraform-token", SCAN, r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=\-]{60,}", "gitleaks hashicorp-tf-api-token "
         "(mixed case)", (".atlasv1.",), in_word=True),
    Rule("pulumi-token", TOKEN, r"pul-[a-f0-9]{40}", "gitleaks pulumi-api-token, trufflehog pulumi", ("pul-",)),
    Rule("prefect-token", TOKEN, r"pnu_[A-Za-z0-9]{36}", "gitleaks prefect-api-token, kingfisher.prefect.1", ("pnu_",)),
    Rule("fly-token", SCAN, r"FlyV1 (?P<v>fm\d[a-z]?_[A-Za-z0-9+/=_,\-]{50,})", "gitleaks flyio-access-token",
         ("FlyV1 ",), word_start=False),
    Rule("fly-token", TOKEN, r"fo1_[A-Za-z0-9_\-]{43}", "gitleaks flyio-access-token", ("fo1_",)),
    Rule("airtable-token", TOKEN, r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}",
         "kingfisher.airtable.1, gitleaks airtable-personnal"
         "-access-token", ("pat",)),
    Rule("dynatrace-token", TOKEN, r"dt0[a-zA-Z][0-9]{2}\.[A-Z0-9]{24}\.[A-Z0-9]{64}", "gitleaks dynatrace-api-token, "
         "noseyparker np.dynatrace.1", ("dt0",)),
    Rule("vault-unseal-key", SCAN, r"unseal(?: key \d+)?:?[ \t]+(?P<v>[a-z0-9+/]{40,}={0,2})(?![a-z0-9+/=])",
         "noseyparker np.hashicorp.7", ("unseal",), lower=True),
    Rule("curl-password", SCAN, r"(?:-u|--user)[ \t]+[\"']?[^\s:\"']*[\"']?:[\"']?(?P<v>[^\s\"'`,;)]{6,})",
         "gitleaks curl-auth-user", ("curl",), lower=True, word_start=False, credible=curl_password),
    Rule("authorization-value", SCAN, r"{k}orization:[ \t]*(?P<v>[a-z0-9._~+/\-]{20,}=*)(?=[\"'\s]|$)",
         "gitleaks curl-auth-header (an Authorization header without a scheme)", ("authorization:",), lower=True,
         word_start=False, credible=not_placeholder, keywords=("auth",)),
    Rule("okta-token", TOKEN, r"00[A-Za-z0-9_\-]{40}(?![A-Za-z0-9_\-])", "noseyparker np.okta.1 (near the word okta)",
         ("00",), credible=mixed_case, context=near_okta),
    Rule("harness-token", TOKEN, r"pat\.[A-Za-z0-9_\-]{22}\.[0-9a-f]{24}\.[A-Za-z0-9]{20}", "trufflehog harness",
         ("pat.",)),
    Rule("sonar-token", TOKEN, r"sq[upa]_[A-Za-z0-9]{40}", "gitleaks sonar-api-token", ("squ_", "sqp_", "sqa_")),
    Rule("artifactory-key", TOKEN, r"AKCp[A-Za-z0-9]{69}|cmVmd[A-Za-z0-9]{59}", "noseyparker np.artifactory.1-2",
         ("AKCp", "cmVmd")),
    Rule("nuget-key", TOKEN, r"oy2[a-z0-9]{43}", "noseyparker np.nuget.1", ("oy2",)),
    Rule("octopus-key", TOKEN, r"API-[A-Z0-9]{26}(?![A-Za-z0-9])", "gitleaks octopus-deploy-api-key", ("API-",)),
    Rule("openshift-token", TOKEN, r"sha256~[A-Za-z0-9_\-]{43}", "gitleaks openshift-user-token", ("sha256~",)),
    Rule("sourcegraph-token", TOKEN, r"slk_[a-f0-9]{64}", "kingfisher.sourcegraph.3 (license keys)", ("slk_",)),
    Rule("sourcegraph-token", TOKEN, r"sgp_(?:[a-fA-F0-9]{16}_)?(?:local_)?[a-fA-F0-9]{40}",
         "noseyparker np.sourcegraph.1, gitleaks sourcegraph-access-token", ("sgp_",)),
    Rule("dependency-track-key", TOKEN, r"odt_[A-Za-z0-9]{32,}", "noseyparker np.dtrack.1", ("odt_",)),
    Rule("readme-key", TOKEN, r"rdme_[a-z0-9]{70}", "kingfisher.readme.1, trufflehog readme", ("rdme_",)),
    Rule("contentful-token", TOKEN, r"CFPAT-[A-Za-z0-9_\-]{43}", "kingfisher.contentful.1", ("CFPAT-",)),
    Rule("planetscale-token", TOKEN, r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_\-.]{32,}",
         "gitleaks planetscale-api-token, planetscale-password", ("pscale_",)),
    Rule("typeform-token", TOKEN, r"tfp_[A-Za-z0-9_\-.=]{40,}", "gitleaks typeform-api-token", ("tfp_",)),
    Rule("netlify-token", TOKEN, r"nfp_[A-Za-z0-9]{36}", "trufflehog netlify", ("nfp_",)),
    Rule("snyk-token", TOKEN, r"snyk_(?:uat|sat)\.[a-z0-9]{8}\.[A-Za-z0-9_\-]{40,}", "Snyk token format", ("snyk_",)),
    # --- cloud and data ---
    Rule("aws-bedrock-key", TOKEN, r"ABSK[A-Za-z0-9+/]{100,}=*", "gitleaks aws-amazon-bedrock-api-key-long-lived",
         ("ABSK",)),
    Rule("azure-connection-key", SCAN,
         r"{k}=(?P<v>[a-z0-9+/]{20,}={0,2})(?=[;\"'\s]|$)",
         "noseyparker np.azure.1-2 (storage, IoT hub and app configuration connection strings)",
         ("accountkey=", "sharedaccesskey=", "secret="), lower=True, word_start=False, credible=not_placeholder,
         keywords=("(?:(?<=account)|(?<=sharedaccess))key", "secret")),
    Rule("azure-devops-pat", SCAN, r"[A-Za-z0-9]{76}AZDO[A-Za-z0-9]{4}(?![A-Za-z0-9])", "noseyparker np.azure.4",
         ("AZDO",), in_word=True),
    Rule("cloudflare-origin-ca-key", TOKEN, r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}", "kingfisher.cloudflare.2, gitleaks "
         "cloudflare-origin-ca-key", ("v1.0-",)),
    Rule("supabase-token", TOKEN, r"sbp_(?:oauth_)?[a-z0-9]{40}|sb_secret_[A-Za-z0-9_\-]{30,}",
         "gitleaks supabase-*, trufflehog supabasetoken", ("sbp_", "sb_secret_")),
    Rule("alibaba-key", TOKEN, r"LTAI[A-Za-z0-9]{12,20}", "gitleaks alibaba-access-key-id, kingfisher.alibabacloud.1",
         ("LTAI",)),
    Rule("dropbox-token", TOKEN, r"sl\.(?:u\.)?[A-Za-z0-9_\-]{130,}",
         "gitleaks dropbox-api-token, kingfisher.dropbox.1",
         ("sl.",)),
    Rule("mapbox-token", TOKEN, r"[st]k\.eyJ[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{20,}",
         "noseyparker np.mapbox.2-3 (the public pk. token is left alone), gitleaks mapbox-api-token",
         ("sk.eyJ", "tk.eyJ")),
    Rule("grafana-key", TOKEN, r"eyJrIjoi[A-Za-z0-9+/]{50,}={0,2}",
         "noseyparker np.grafana.1, gitleaks grafana-api-key",
         ("eyJrIjoi",)),
    # --- chat, payments, commerce ---
    Rule("discord-bot-token", TOKEN, r"[A-Za-z0-9_\-]{0,2}[MNO][A-Za-z0-9_\-]{23,25}\.[A-Za-z0-9_\-]{6}\."
         r"[A-Za-z0-9_\-]{27,38}(?![A-Za-z0-9_\-])",
         "detect-secrets DiscordBotTokenDetector (also two characters into a "
         "word), kingfisher.discord.2", tuple(string.ascii_uppercase), credible=mixed_parts,
         word_check=lambda w: w.find(".", 24, 29) > 0),
    Rule("slack-token", TOKEN,
         r"xoxe\.xox[bp]-\d-[A-Za-z0-9]{100,}|xoxe-\d-[A-Za-z0-9]{100,}|xoxo-[0-9\-]{8,}[a-f0-9]{10,}",
         "gitleaks slack-config-access-token, slack-config-refresh-token, slack-legacy-token", ("xoxe", "xoxo-")),
    Rule("square-token", TOKEN, r"(?:sandbox-)?sq0(?:atp|csp|csb|idb|ige)-[A-Za-z0-9_\-]{22,}|EAAA[A-Za-z0-9_\-+=]{60}",
         "noseyparker np.square.1-2, gitleaks square-access-token, square-secret", ("sq0", "sandbox-sq0", "EAAA")),
    Rule("facebook-token", TOKEN, r"EAA[A-Za-z0-9]{90,}|EAAC[A-Za-z0-9]{30,}",
         "noseyparker np.facebook.2, gitleaks facebook-page-access-token", ("EAA",)),
    Rule("facebook-token", TOKEN, r"\d{15,16}\|[A-Za-z0-9_\-]{27}(?![A-Za-z0-9_\-])",
         "gitleaks facebook-access-token (app id|app secret)", tuple("123456789")),
    Rule("telegram-bot-token", SCAN, r"\d{8,10}:AA[0-9A-Za-z_\-]{28,40}(?![0-9A-Za-z_\-])",
         "noseyparker np.telegram.1", (":AA",)),
    Rule("stripe-key", TOKEN, r"(?:sk|rk)_(?:prod|live|test)_[0-9a-zA-Z]{10,}", "gitleaks stripe-access-token (prod "
         "keys, short keys)", ("sk_prod_", "rk_prod_", "sk_live_", "rk_live_", "sk_test_", "rk_test_")),
    Rule("shippo-token", TOKEN, r"shippo_(?:live|test)_[a-fA-F0-9]{40}", "gitleaks shippo-api-token",
         ("shippo_live_", "shippo_test_")),
    Rule("easypost-token", TOKEN, r"EZ[AT]K[A-Za-z0-9]{54}(?![A-Za-z0-9+/=])",
         "gitleaks easypost-api-token, kingfisher.easypost.1",
         ("EZAK", "EZTK")),
    Rule("lob-key", TOKEN, r"(?:live|test)_[a-f0-9]{35}", "gitleaks lob-api-key, trufflehog lob", ("live_", "test_")),
    Rule("twitch-stream-key", TOKEN, r"live_\d{6,12}_[A-Za-z0-9]{30}", "noseyparker np.twitch.1", ("live_",)),
    Rule("sendinblue-key", TOKEN, r"xkeysib-[A-Za-z0-9_\-]{64,}(?:-[A-Za-z0-9]{16})?", "gitleaks sendinblue-api-token",
         ("xkeysib-",)),
    Rule("mailchimp-key", TOKEN, r"[a-f0-9]{32}-us\d{1,2}(?![A-Za-z0-9])",
         "detect-secrets MailchimpDetector, noseyparker np.mailchimp.1", ("-us",), at_end=True),
    Rule("hubspot-token", TOKEN, r"pat-(?:na|eu)\d-[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}",
         "kingfisher.hubspot.1", ("pat-na", "pat-eu")),
    Rule("plaid-token", TOKEN, r"access-(?:sandbox|development|production)-[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-"
         r"[a-f0-9]{4}-[a-f0-9]{12}", "gitleaks plaid-api-token", ("access-",)),
    Rule("intra42-secret", TOKEN, r"s-s4t2(?:ud|af)-[a-f0-9]{64}", "gitleaks intra42-client-secret", ("s-s4t2",)),
    Rule("newrelic-key", TOKEN, r"NR(?:AA|II|IQ|RA|JS)-[A-Za-z0-9_\-]{19,}", "noseyparker np.newrelic.3-7",
         ("NRAA-", "NRII-", "NRIQ-", "NRRA-", "NRJS-")),
    Rule("newrelic-key", SCAN, r"(?:eu\d\d)?[a-z0-9]{36}NRAL(?![A-Za-z0-9])",
         "noseyparker np.newrelic.1 (license keys)",
         ("NRAL",), in_word=True),
    Rule("okta-token", SCAN, r"ssws[ \t]+(?P<v>00[a-z0-9_\-]{40})", "noseyparker np.okta.1", ("ssws",), lower=True),
    Rule("kubernetes-bootstrap-token", SCAN,
         r"{k}[\w\-]*[\"']?[ \t]*[:=][ \t]*[\"']?(?P<v>[a-z0-9]{6}\.[a-z0-9]{16})",
         "noseyparker np.kubernetes.1", ("bootstrap",), lower=True, word_start=False, keywords=("bootstrap",)),
    Rule("sidekiq-secret", SCAN, r"bundle_(?:enterprise|gems)__contribsys__com[\"']?[ \t]*[:=][ \t]*[\"']?"
         r"(?P<v>[a-f0-9]{8}:[a-f0-9]{8})", "gitleaks sidekiq-secret", ("contribsys",), lower=True, word_start=False),
    Rule("heroku-key", TOKEN, r"HRKU-[A-Za-z0-9_\-]{60,}", "gitleaks heroku-api-key-v2", ("HRKU-",)),
    Rule("notion-token", TOKEN, r"(?:ntn_[0-9]{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43})(?![A-Za-z0-9_])",
         "gitleaks notion-api-token, trufflehog notion", ("ntn_", "secret_")),
)  # fmt: skip
