/* Placeholder grammar: replaced by the real usda grammar. */
%define api.pure full
%define api.prefix {ub_yy}
%code { static void ub_yyerror(const char *m) { (void)m; } static int ub_yylex(UB_YYSTYPE *v) { (void)v; return 0; } }
%%
input: %empty ;
%%
