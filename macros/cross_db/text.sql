{#- Text similarity (scope rules of metrics.md): token Jaccard = lower-case,
    split on runs of non-alphanumeric characters (Unicode letters and digits),
    no stemming, |A and B| / |A or B| over distinct tokens. Null when either
    text is null; 0 when neither text has a token. -#}
{% macro lara_token_jaccard(left_text, right_text) %}
    {{ return(adapter.dispatch('lara_token_jaccard', 'lara')(left_text, right_text)) }}
{% endmacro %}

{% macro lara_tokens(text) %}
    {{ return(adapter.dispatch('lara_tokens', 'lara')(text)) }}
{% endmacro %}

{% macro duckdb__lara_tokens(text) -%}
    list_distinct(list_filter(
        regexp_split_to_array(lower({{ text }}), '[^\p{L}\p{N}]+'),
        lambda token: token <> ''
    ))
{%- endmacro %}

{% macro default__lara_tokens(text) -%}
    array_distinct(filter(split(lower({{ text }}), '[^\\p{L}\\p{N}]+'), token -> token <> ''))
{%- endmacro %}

{% macro duckdb__lara_token_jaccard(left_text, right_text) -%}
    {{ lara_token_set_jaccard(lara_tokens(left_text), lara_tokens(right_text)) }}
{%- endmacro %}

{% macro default__lara_token_jaccard(left_text, right_text) -%}
    {{ lara_token_set_jaccard(lara_tokens(left_text), lara_tokens(right_text)) }}
{%- endmacro %}


{#- lara_token_set_jaccard(left_tokens, right_tokens): the Jaccard index of two
    token lists made by lara_tokens (tokenise each text once, e.g. in a CTE,
    then compare lists). Null when either is null; 0 when both are empty. -#}
{% macro lara_token_set_jaccard(left_tokens, right_tokens) %}
    {{ return(adapter.dispatch('lara_token_set_jaccard', 'lara')(left_tokens, right_tokens)) }}
{% endmacro %}

{% macro duckdb__lara_token_set_jaccard(left_tokens, right_tokens) -%}
    case
        when {{ left_tokens }} is null or {{ right_tokens }} is null then null
        when len(list_distinct(list_concat({{ left_tokens }}, {{ right_tokens }}))) = 0 then 0.0
        else
            len(list_intersect({{ left_tokens }}, {{ right_tokens }}))
            / len(list_distinct(list_concat({{ left_tokens }}, {{ right_tokens }})))
    end
{%- endmacro %}

{% macro default__lara_token_set_jaccard(left_tokens, right_tokens) -%}
    case
        when {{ left_tokens }} is null or {{ right_tokens }} is null then null
        when size(array_union({{ left_tokens }}, {{ right_tokens }})) = 0 then 0.0
        else
            size(array_intersect({{ left_tokens }}, {{ right_tokens }}))
            / size(array_union({{ left_tokens }}, {{ right_tokens }}))
    end
{%- endmacro %}


{#- Seconds from `start_expression` to `end_expression` (timestamps), as a double. -#}
{% macro lara_seconds_between(start_expression, end_expression) %}
    {{ return(adapter.dispatch('lara_seconds_between', 'lara')(start_expression, end_expression)) }}
{% endmacro %}

{% macro duckdb__lara_seconds_between(start_expression, end_expression) -%}
    (epoch({{ end_expression }}) - epoch({{ start_expression }}))
{%- endmacro %}

{% macro default__lara_seconds_between(start_expression, end_expression) -%}
    (unix_micros({{ end_expression }}) - unix_micros({{ start_expression }})) / 1000000.0
{%- endmacro %}


{#- Microseconds since the Unix epoch of a timestamp, as a bigint (an exact
    numeric order key, e.g. for range window frames). -#}
{% macro lara_epoch_microseconds(expression) %}
    {{ return(adapter.dispatch('lara_epoch_microseconds', 'lara')(expression)) }}
{% endmacro %}

{% macro duckdb__lara_epoch_microseconds(expression) -%}
    epoch_us({{ expression }})
{%- endmacro %}

{% macro default__lara_epoch_microseconds(expression) -%}
    unix_micros({{ expression }})
{%- endmacro %}
